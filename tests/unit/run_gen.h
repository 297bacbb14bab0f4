/* run_gen.h - running the argus-gen binary (tests/gen/argus_gen.c) from a
 * test, for the tests that check the traces it writes (test_tracegen.c,
 * test_hangs_sweep.c).  CMake passes the binary's path as the test's
 * argv[1]. */
#ifndef ARGUS_TEST_RUN_GEN_H
#define ARGUS_TEST_RUN_GEN_H
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run `gen -o out extra...` (extra NULL-terminated, at most 27 words) and
 * wait for it; its stdout goes to stdout_path (created or truncated) if
 * given, else to ours.  Returns its exit status, -1 when it did not exit
 * (or could not be started), 126 when stdout_path could not be opened,
 * 127 when gen could not be run. */
static inline int run_gen_to(const char *gen, const char *out, const char *const *extra,
			     const char *stdout_path)
{
	const char *argv[32];
	int n = 0, status;
	pid_t pid;

	argv[n++] = gen;
	argv[n++] = "-o";
	argv[n++] = out;
	while (*extra && n < 30)
		argv[n++] = *extra++;
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		int fd = stdout_path ? open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0600) : 1;

		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		if (fd != 1)
			close(fd);
		execv(gen, (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
#endif
