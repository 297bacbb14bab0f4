/* proc_creds.c - see proc_creds.h. */
#include "proc_creds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int argus_proc_creds(int dirfd, char *out, size_t len, uint32_t *euid, uint32_t *egid)
{
	char buf[2048], *line, *save = NULL;
	size_t k = 0;
	ssize_t n;
	int fd, got = 0;

	/* Uid: and Gid: come in the first kilobyte of a status file */
	fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	out[0] = 0;
	for (line = strtok_r(buf, "\n", &save); line && got < 2; line = strtok_r(NULL, "\n", &save)) {
		unsigned r, e;
		bool uid = !strncmp(line, "Uid:", 4);

		if (!uid && strncmp(line, "Gid:", 4))
			continue;
		if (sscanf(line + 4, "%u %u", &r, &e) != 2)
			return -EIO;
		if (uid && euid)
			*euid = e;
		if (!uid && egid)
			*egid = e;
		k += (size_t)snprintf(out + k, k < len ? len - k : 0, "%s;", line);
		got++;
	}
	return got == 2 && k < len ? 0 : -EIO;
}
