/* test_holder_cmd.c - running the schema's `holder` commands (cli/
 * holder_cmd.c, docs/schema.md "Holders only the application knows"):
 * with real processes, as root (ctest runs as root; the parts that need
 * root are skipped, and said so, otherwise):
 *   - the built-in rules parse, and name PostgreSQL's ProcSleep;
 *   - whom a command runs as: the waiting process's real uid, gid and
 *     groups, or the rule's user; never root;
 *   - which program: an absolute path, or a bare name beside argus, in
 *     /usr/bin, /bin; refused when others could have written it;
 *   - how: no root, no fds but 0/1/2, stdin /dev/null, an environment of
 *     PATH and LC_ALL only, cwd /, no new privileges; killed with its
 *     process group at the timeout; at most 4 KiB of output; exit status
 *     0 or no answer;
 *   - its output: pids of processes that exist, not the waiter's;
 *   - argus-pg-holders refuses what is not a PostgreSQL backend.
 * argv[1]: the argus-pg-holders binary. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "argus_graph.h"
#include "argus_holder_rule.h"
#include "check.h"
#include "holder_cmd.h"

#define NOBODY 65534u

static const char *pg_holders;
static char dir[64];

static bool root(const char *test)
{
	if (geteuid() == 0)
		return true;
	fprintf(stderr, "  (skipped: %s needs root)\n", test);
	return false;
}

static const struct holder_cred nobody = { .uid = NOBODY, .gid = NOBODY };

/* Runs argv (argv[0] the path) as nobody with timeout ms: exec's result,
 * the output NUL-terminated in out. */
static int run_as_nobody(char *const argv[], uint32_t ms, char *out, size_t cap, size_t *n,
			 uint64_t *took, char *why)
{
	int rc = holder_cmd_exec(argv[0], argv, &nobody, ms, out, cap - 1, n, took, why, 224);

	out[*n] = 0;
	return rc;
}

static void builtin_rules_name_postgres_lock_waits(void)
{
	struct argus_error err;
	struct argus_schema *s;
	const struct argus_holder_rule *r;

	memset(&err, 0, sizeof(err));
	s = argus_schema__parse(holder_cmd_builtin_schema, strlen(holder_cmd_builtin_schema),
				HOLDER_CMD_BUILTIN_NAME, &err);
	CHECK(s);
	if (!s) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	CHECK_EQ(argus_schema__nholders(s), 1);
	r = argus_schema__holder(s, 0);
	CHECK(r && r->nfuncs == 2 && !strcmp(r->funcs[0], "ProcSleep") &&
	      !strcmp(r->funcs[1], "XactLockTableWait"));
	CHECK(r && !strcmp(r->process, "postgres") && !r->user[0]);
	CHECK(r && r->argc == 2 && !strcmp(r->argv[0], "argus-pg-holders") &&
	      !strcmp(r->argv[1], "%p"));
	argus_schema__free(s);
}

static void credentials_of_a_process_and_of_a_user(void)
{
	struct holder_cred cr;
	char why[224];
	int p[2];
	pid_t c;

	CHECK_EQ(holder_cmd_cred_of_user("root", &cr, why, sizeof(why)), -EPERM);
	CHECK(strstr(why, "never runs as root"));
	CHECK_EQ(holder_cmd_cred_of_user("no-such-user-argus", &cr, why, sizeof(why)), -ENOENT);
	CHECK_EQ(holder_cmd_cred_of_user("nobody", &cr, why, sizeof(why)), 0);
	CHECK_EQ(cr.uid, NOBODY);
	CHECK_EQ(cr.gid, NOBODY);
	CHECK_EQ(holder_cmd_cred_of_pid(999999999, &cr, why, sizeof(why)), -ENOENT);
	if (geteuid() == 0) {
		CHECK_EQ(holder_cmd_cred_of_pid((uint32_t)getpid(), &cr, why, sizeof(why)), -EPERM);
		CHECK(strstr(why, "runs as root"));
	}
	if (!root("a process of another uid"))
		return;
	/* a child that becomes uid 1234, gid 2345, groups {7, 8} */
	if (pipe(p))
		return;
	c = fork();
	if (c == 0) {
		gid_t g[2] = { 7, 8 };
		char x = 'r';

		if (setgroups(2, g) || setgid(2345) || setuid(1234))
			_exit(1);
		if (write(p[1], &x, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	{
		char x;

		CHECK_EQ(read(p[0], &x, 1), 1);
	}
	close(p[0]);
	CHECK_EQ(holder_cmd_cred_of_pid((uint32_t)c, &cr, why, sizeof(why)), 0);
	CHECK_EQ(cr.uid, 1234);
	CHECK_EQ(cr.gid, 2345);
	CHECK_EQ(cr.ngroups, 2);
	CHECK_EQ(cr.groups[0], 7);
	CHECK_EQ(cr.groups[1], 8);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
}

static void the_program_is_found_and_checked(void)
{
	char path[4096], why[224], f[128];
	int fd;

	CHECK_EQ(holder_cmd_resolve("/bin/echo", NOBODY, path, sizeof(path), why, sizeof(why)), 0);
	CHECK(!strcmp(path, "/bin/echo"));
	CHECK_EQ(holder_cmd_resolve("echo", NOBODY, path, sizeof(path), why, sizeof(why)), 0);
	CHECK(!strcmp(path, "/usr/bin/echo"));
	CHECK_EQ(holder_cmd_resolve("no-such-program-argus", NOBODY, path, sizeof(path), why,
				    sizeof(why)), -ENOENT);
	CHECK(strstr(why, "no program 'no-such-program-argus'"));
	CHECK_EQ(holder_cmd_resolve("/tmp", NOBODY, path, sizeof(path), why, sizeof(why)), -EACCES);
	CHECK_EQ(holder_cmd_resolve("/etc/passwd", NOBODY, path, sizeof(path), why, sizeof(why)),
		 -EACCES);
	/* an executable others may write: refused */
	snprintf(f, sizeof(f), "%s/open", dir);
	fd = open(f, O_CREAT | O_WRONLY | O_TRUNC, 0755);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	chmod(f, 0777);
	CHECK_EQ(holder_cmd_resolve(f, NOBODY, path, sizeof(path), why, sizeof(why)), -EPERM);
	CHECK(strstr(why, "writable by neither group nor others"));
	chmod(f, 0755);
	if (geteuid() == 0) {
		/* root's and the user's own are fine; another user's is not */
		CHECK_EQ(holder_cmd_resolve(f, NOBODY, path, sizeof(path), why, sizeof(why)), 0);
		CHECK_EQ(chown(f, NOBODY, NOBODY), 0);
		CHECK_EQ(holder_cmd_resolve(f, NOBODY, path, sizeof(path), why, sizeof(why)), 0);
		CHECK_EQ(holder_cmd_resolve(f, 1234, path, sizeof(path), why, sizeof(why)), -EPERM);
	}
	unlink(f);
}

static void it_runs_as_the_user_with_nothing_else(void)
{
	char out[ARGUS_HOLDER_MAX_OUTPUT + 1], why[224];
	size_t n;
	uint64_t ms;
	int keep;

	if (!root("running as another user"))
		return;
	{
		char *argv[] = { "/usr/bin/id", NULL };

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), 0);
		CHECK(!strncmp(out, "uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)", 58));
		if (strncmp(out, "uid=65534(nobody)", 17))
			fprintf(stderr, "  id: %s\n", out);
	}
	{
		char *argv[] = { "/usr/bin/env", NULL };

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), 0);
		CHECK(!strcmp(out, "PATH=/usr/bin:/bin\nLC_ALL=C\n"));
	}
	{
		char *argv[] = { "/bin/pwd", NULL };

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), 0);
		CHECK(!strcmp(out, "/\n"));
	}
	{
		char *argv[] = { "/bin/cat", NULL };   /* stdin is /dev/null */

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), 0);
		CHECK_EQ(n, 0);
	}
	{
		char *argv[] = { "/bin/grep", "-E", "^(NoNewPrivs|CapEff)", "/proc/self/status", NULL };

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), 0);
		CHECK(strstr(out, "NoNewPrivs:\t1"));
		CHECK(strstr(out, "CapEff:\t0000000000000000"));
	}
	/* an fd of ours, not close-on-exec, does not reach it */
	keep = dup2(2, 57);
	CHECK_EQ(keep, 57);
	{
		char *argv[] = { "/bin/ls", "/proc/self/fd", NULL };

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), 0);
		CHECK(!strcmp(out, "0\n1\n2\n3\n"));   /* 3: ls's own directory */
	}
	close(57);
}

static void never_as_root(void)
{
	struct holder_cred r = { .uid = 0, .gid = 0 };
	char *argv[] = { "/usr/bin/id", NULL };
	char out[64], why[224];
	size_t n;
	uint64_t ms;

	CHECK_EQ(holder_cmd_exec(argv[0], argv, &r, 1000, out, sizeof(out), &n, &ms, why,
				 sizeof(why)), -EPERM);
	CHECK(strstr(why, "as root"));
	if (geteuid() != 0) {
		struct holder_cred other = { .uid = geteuid() + 1, .gid = 1 };

		CHECK_EQ(holder_cmd_exec(argv[0], argv, &other, 1000, out, sizeof(out), &n, &ms, why,
					 sizeof(why)), -EPERM);
	}
}

static bool gone(pid_t p)
{
	char path[64], st[512] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)p);
	f = fopen(path, "r");
	if (!f)
		return true;
	if (!fgets(st, sizeof(st), f))
		st[0] = 0;
	fclose(f);
	return strstr(st, ") Z ") != NULL;      /* a zombie init has to reap */
}

static void the_timeout_kills_its_process_group(void)
{
	char out[ARGUS_HOLDER_MAX_OUTPUT + 1], why[224];
	size_t n;
	uint64_t ms;

	if (!root("running as another user"))
		return;
	{
		char *argv[] = { "/bin/sleep", "10", NULL };

		CHECK_EQ(run_as_nobody(argv, 200, out, sizeof(out), &n, &ms, why), -ETIMEDOUT);
		CHECK(ms >= 200 && ms < 1500);
		CHECK(strstr(why, "timed out after 200 ms"));
	}
	{
		/* a child in the background keeps stdout open: both killed */
		char *argv[] = { "/bin/sh", "-c", "sleep 30 & echo $!; sleep 30", NULL };
		long bg;

		CHECK_EQ(run_as_nobody(argv, 300, out, sizeof(out), &n, &ms, why), -ETIMEDOUT);
		bg = atol(out);
		CHECK(bg > 0);
		for (int i = 0; i < 100 && bg > 0 && !gone((pid_t)bg); i++)
			usleep(10000);
		CHECK(bg > 0 && gone((pid_t)bg));
	}
}

static void no_answer_unless_it_exits_0_with_little_output(void)
{
	char out[ARGUS_HOLDER_MAX_OUTPUT + 1], why[224];
	size_t n;
	uint64_t ms;

	if (!root("running as another user"))
		return;
	{
		char *argv[] = { "/bin/false", NULL };

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), -ECHILD);
		CHECK(strstr(why, "exited 1"));
	}
	{
		char *argv[] = { "/bin/sh", "-c", "kill -9 $$", NULL };

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), -ECHILD);
		CHECK(strstr(why, "killed by signal 9"));
	}
	{
		char *argv[] = { "/bin/sh", "-c", "head -c 4097 /dev/zero | tr '\\0' 1", NULL };

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), -E2BIG);
		CHECK(strstr(why, "more than 4096 bytes"));
	}
	{
		char *argv[] = { "/bin/sh", "-c", "head -c 4096 /dev/zero | tr '\\0' 1", NULL };

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), 0);
		CHECK_EQ(n, 4096);
	}
	{
		char *argv[] = { "/no/such/program", NULL };

		CHECK_EQ(run_as_nobody(argv, 2000, out, sizeof(out), &n, &ms, why), -ECHILD);
		CHECK(strstr(why, "exited 127"));
	}
}

static void output_names_existing_processes_other_than_the_waiter(void)
{
	uint32_t p[ARGUS_HOLDER_MAX_PIDS], me = (uint32_t)getpid(), parent = (uint32_t)getppid();
	char out[64], why[224];

	snprintf(out, sizeof(out), "{%u}\n", parent);
	CHECK_EQ(holder_cmd_check_output(out, strlen(out), me, p, 16, why, sizeof(why)), 1);
	CHECK_EQ(p[0], parent);
	snprintf(out, sizeof(out), "{%u,%u}\n", parent, me);
	CHECK_EQ(holder_cmd_check_output(out, strlen(out), me, p, 16, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "the waiting process itself"));
	CHECK_EQ(holder_cmd_check_output("4194303", 7, me, p, 16, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "does not exist"));
	CHECK_EQ(holder_cmd_check_output("{}\n", 3, me, p, 16, why, sizeof(why)), 0);
	CHECK_EQ(holder_cmd_check_output("ERROR: x", 8, me, p, 16, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "not a list of pids"));
}

/* argus-pg-holders PID: exit status 2 and one line for what is not a
 * backend of a server whose data directory it runs in. */
static void pg_holders_refuses_what_is_not_a_backend(void)
{
	static const char *const bad[] = { "", "0", "abc", "4194305", "1 2", NULL };
	char cmd[4200], pid[16];
	int st;

	if (!pg_holders) {
		fprintf(stderr, "  (skipped: no argus-pg-holders given)\n");
		return;
	}
	for (int i = 0; bad[i]; i++) {
		snprintf(cmd, sizeof(cmd), "'%s' '%s' 2>/dev/null", pg_holders, bad[i]);
		st = system(cmd);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	}
	/* this test's own pid: its cwd has no postmaster.pid */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s 2>&1", dir, pg_holders, pid);
	{
		FILE *f = popen(cmd, "r");
		char line[512] = "";

		CHECK(f);
		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = 0;
			st = pclose(f);
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
			CHECK(strstr(line, "argus-pg-holders: ") && strstr(line, "postmaster.pid"));
		}
	}
	/* a fake data directory, with a postmaster.pid that is not the
	 * process's parent's: refused before any psql */
	{
		char f[256], d[128];
		FILE *pf;
		pid_t c;
		int p[2];

		snprintf(d, sizeof(d), "%s/data", dir);
		mkdir(d, 0700);
		snprintf(f, sizeof(f), "%s/postmaster.pid", d);
		pf = fopen(f, "w");
		CHECK(pf);
		if (!pf)
			return;
		fprintf(pf, "1\n%s\n1700000000\n5432\n/tmp\n*\n  5432001 0\nready\n", d);
		fclose(pf);
		if (pipe(p))
			return;
		c = fork();
		if (c == 0) {
			char x = 'r';

			if (chdir(d) || write(p[1], &x, 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		close(p[1]);
		{
			char x;

			CHECK_EQ(read(p[0], &x, 1), 1);
		}
		close(p[0]);
		snprintf(cmd, sizeof(cmd), "'%s' %d 2>&1", pg_holders, (int)c);
		pf = popen(cmd, "r");
		CHECK(pf);
		if (pf) {
			char line[512] = "";

			if (!fgets(line, sizeof(line), pf))
				line[0] = 0;
			st = pclose(pf);
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
			CHECK(strstr(line, "not a backend of the server"));
		}
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
		unlink(f);
		rmdir(d);
	}
}

int main(int argc, char **argv)
{
	char cmd[96];

	pg_holders = argc > 1 ? argv[1] : NULL;
	snprintf(dir, sizeof(dir), "/tmp/test_holder_cmd.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	chmod(dir, 0755);
	RUN(builtin_rules_name_postgres_lock_waits);
	RUN(credentials_of_a_process_and_of_a_user);
	RUN(the_program_is_found_and_checked);
	RUN(it_runs_as_the_user_with_nothing_else);
	RUN(never_as_root);
	RUN(the_timeout_kills_its_process_group);
	RUN(no_answer_unless_it_exits_0_with_little_output);
	RUN(output_names_existing_processes_other_than_the_waiter);
	RUN(pg_holders_refuses_what_is_not_a_backend);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_report();
}
