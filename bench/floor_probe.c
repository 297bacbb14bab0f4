// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * floor_probe -- CMD [ARGS...]
 *
 * Runs CMD with bench/floor.bpf.c's empty programs attached system-wide
 * and exits with CMD's status: the "BPF floor" column of bench/overhead.sh.
 * Root only, like argus record.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "floor.skel.h"

static int quiet_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	return lvl == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	struct floor_bpf *skel;
	int status = 0, err;
	pid_t child;

	if (argc < 3 || strcmp(argv[1], "--")) {
		fprintf(stderr, "usage: floor_probe -- CMD [ARGS...]\n");
		return 2;
	}
	libbpf_set_print(quiet_print);
	skel = floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "floor_probe: loading the BPF programs failed: %s (run as root)\n",
			strerror(errno));
		return 1;
	}
	err = floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "floor_probe: attaching failed: %s\n", strerror(-err));
		floor_bpf__destroy(skel);
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("floor_probe: fork");
		floor_bpf__destroy(skel);
		return 1;
	}
	if (child == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "floor_probe: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	floor_bpf__destroy(skel);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
