/* proc_status.h - one "Key:\tvalue" line of /proc/PID/status as a number,
 * for the tests that check a helper process's uid, no_new_privs and
 * seccomp mode (test_unwind_helper.c, test_symbols.c). */
#ifndef ARGUS_TEST_PROC_STATUS_H
#define ARGUS_TEST_PROC_STATUS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* The first number after "key:", or -1 (no such process or line). */
static inline long status_field(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t len = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}
#endif
