/* test_mark_socket.c - the mark socket (collector/mark_socket.h): the peer
 * check on credentials built here, the group database on this machine's
 * real accounts, the text rule, a real server on a unix socket in a temp
 * dir driven by a client in this process (a uid's connections bounded),
 * and marks of an older collector
 * (a trace written before marks carried a uid) reading as "uid unknown". */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "argus_events.h"
#include "check.h"
#include "mark_socket.h"
#include "trace_format.h"

#define GROUP 4242

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_peer_check(void)
{
	struct argus_mark_peer p = { .pid = 100, .uid = 1000, .gid = 1000 };

	/* root may, whatever its groups and the database say */
	struct argus_mark_peer root = { .pid = 1, .uid = 0, .gid = 0 };
	CHECK_EQ(argus_mark_peer__check(&root, GROUP, false), 0);
	/* a user whose process carries no group: no */
	CHECK_EQ(argus_mark_peer__check(&p, GROUP, true), -EPERM);
	/* carries it as a supplementary group and is a member: yes */
	p.groups[0] = 27;
	p.groups[1] = GROUP;
	p.ngroups = 2;
	CHECK_EQ(argus_mark_peer__check(&p, GROUP, true), 0);
	/* carries it, but the database no longer lists the uid (removed from
	 * the group while logged in, or a setgid program): no */
	CHECK_EQ(argus_mark_peer__check(&p, GROUP, false), -EPERM);
	/* as its gid (newgrp) and a member: yes */
	p.ngroups = 0;
	p.gid = GROUP;
	CHECK_EQ(argus_mark_peer__check(&p, GROUP, true), 0);
	/* a group past ngroups is not looked at */
	p.gid = 1000;
	p.ngroups = 1;
	CHECK_EQ(argus_mark_peer__check(&p, GROUP, true), -EPERM);
	CHECK_EQ(argus_mark_peer__check(NULL, GROUP, true), -EPERM);
}

/* The real accounts: root's primary group is 0; nobody is not in root's
 * group; a uid with no account is in no group. */
static void test_group_database(void)
{
	struct passwd *nobody = getpwnam("nobody");

	CHECK(argus_mark_group__has_uid(0, 0));
	if (nobody) {
		CHECK(argus_mark_group__has_uid(nobody->pw_uid, nobody->pw_gid));
		CHECK(!argus_mark_group__has_uid(nobody->pw_uid, 0));
	}
	CHECK(!argus_mark_group__has_uid(3999999999u, 0));
}

static void test_text_rule(void)
{
	char big[ARGUS_MARK_TEXT_MAX + 1];

	CHECK_EQ(argus_mark_text__check("froze", 5), 0);
	CHECK_EQ(argus_mark_text__check("gel \xc3\xa9 \xe2\x9d\x84", 10), 0); /* UTF-8 passes */
	CHECK_EQ(argus_mark_text__check("", 0), -EINVAL);
	CHECK_EQ(argus_mark_text__check("a\nb", 3), -EINVAL);
	CHECK_EQ(argus_mark_text__check("a\033[2Jb", 6), -EINVAL);
	CHECK_EQ(argus_mark_text__check("a\x7f", 2), -EINVAL);
	CHECK_EQ(argus_mark_text__check("a\0b", 3), -EINVAL);
	memset(big, 'x', sizeof(big));
	CHECK_EQ(argus_mark_text__check(big, ARGUS_MARK_TEXT_MAX), 0);
	CHECK_EQ(argus_mark_text__check(big, ARGUS_MARK_TEXT_MAX + 1), -E2BIG);
}

static void test_path(void)
{
	char p[256];

	setenv("ARGUS_RUN_DIR", "/tmp/x/run/", 1);
	argus_mark_socket_path(p, sizeof(p));
	CHECK(!strcmp(p, "/tmp/x/run-mark/mark.sock"));
	unsetenv("ARGUS_RUN_DIR");
	argus_mark_socket_path(p, sizeof(p));
	CHECK(!strcmp(p, "/run/argus-mark/mark.sock"));
}

struct got {
	int n;
	uint32_t pid, uid;
	char text[ARGUS_MARK_TEXT_MAX + 1];
};

static int on_mark(void *ctx, uint32_t pid, uint32_t uid, const char *text)
{
	struct got *g = ctx;

	g->n++;
	g->pid = pid;
	g->uid = uid;
	snprintf(g->text, sizeof(g->text), "%s", text);
	return 0;
}

static int dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	int fd;

	if (len >= sizeof(sa.sun_path))
		return -1;      /* a socket path that does not fit: no dial */
	memcpy(sa.sun_path, path, len + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends req (len bytes), lets the server serve until the answer comes
 * (at most 2 s), and returns the answer. */
static const char *ask(struct argus_mark_server *s, const char *path, const void *req,
		       size_t len, char *ans, size_t anslen)
{
	int fd = dial(path);
	ssize_t n = 0;

	ans[0] = 0;
	if (fd < 0)
		return "(cannot connect)";
	if (len && write(fd, req, len) != (ssize_t)len) {
		close(fd);
		return "(cannot write)";
	}
	for (int i = 0; i < 200 && n <= 0; i++) {
		argus_mark_server__serve(s, now_ns());
		n = recv(fd, ans, anslen - 1, MSG_DONTWAIT);
		if (n <= 0)
			usleep(10000);
	}
	close(fd);
	ans[n > 0 ? n : 0] = 0;
	return ans;
}

static void test_server(void)
{
	char dir[] = "/tmp/argus-test-mark.XXXXXX", path[300], ans[300], err[300];
	char big[5 + ARGUS_MARK_TEXT_MAX + 2 + 16];
	struct argus_mark_server_stats st;
	struct got g = { 0 };
	struct stat sb;
	struct argus_mark_server *s;

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/run-mark/mark.sock", dir);
	s = argus_mark_server__new(path, getegid(), on_mark, &g, err, sizeof(err));
	CHECK(s != NULL);
	if (!s) {
		fprintf(stderr, "server: %s\n", err);
		return;
	}
	/* the socket and its directory belong to the group, 0660 and 0750 */
	CHECK(!lstat(path, &sb) && S_ISSOCK(sb.st_mode) && (sb.st_mode & 0777) == 0660 &&
	      sb.st_gid == getegid());
	snprintf(big, sizeof(big), "%s/run-mark", dir);
	CHECK(!lstat(big, &sb) && S_ISDIR(sb.st_mode) && (sb.st_mode & 0777) == 0750);

	ask(s, path, "mark froze\n", 11, ans, sizeof(ans));
	CHECK(!strcmp(ans, "ok\n"));
	CHECK_EQ(g.n, 1);
	CHECK_EQ(g.pid, getpid());
	CHECK_EQ(g.uid, geteuid());
	CHECK(!strcmp(g.text, "froze"));

	/* the control socket's requests are not served here */
	ask(s, path, "status\n", 7, ans, sizeof(ans));
	CHECK(!strncmp(ans, "error: the mark socket takes only", 33));
	ask(s, path, "flush\n", 6, ans, sizeof(ans));
	CHECK(!strncmp(ans, "error: ", 7));
	/* forged text: an escape sequence, a NUL hiding the rest */
	ask(s, path, "mark a\033[2Jb\n", 12, ans, sizeof(ans));
	CHECK(!strncmp(ans, "error: mark: the text must be printable", 39));
	ask(s, path, "mark a\0status\n", 14, ans, sizeof(ans));
	CHECK(!strncmp(ans, "error: ", 7));
	ask(s, path, "mark \n", 6, ans, sizeof(ans));
	CHECK(!strncmp(ans, "error: mark: the text must be printable", 39));
	/* too long: refused once the bound is passed, without a newline */
	memcpy(big, "mark ", 5);
	memset(big + 5, 'x', sizeof(big) - 5);
	ask(s, path, big, sizeof(big), ans, sizeof(ans));
	CHECK(!strncmp(ans, "error: mark: text too long", 26));
	/* exactly the bound passes */
	big[5 + ARGUS_MARK_TEXT_MAX] = '\n';
	ask(s, path, big, 5 + ARGUS_MARK_TEXT_MAX + 1, ans, sizeof(ans));
	CHECK(!strcmp(ans, "ok\n"));
	CHECK_EQ(strlen(g.text), ARGUS_MARK_TEXT_MAX);
	CHECK_EQ(g.n, 2);
	/* a client that says nothing is dropped after a second, with a line */
	ask(s, path, "", 0, ans, sizeof(ans));
	CHECK(!strncmp(ans, "error: mark: no request within a second", 39));
	/* a burst beyond the rate limit is refused, not recorded */
	int ok = 0, refused = 0;
	for (int i = 0; i < 40; i++) {
		ask(s, path, "mark again\n", 11, ans, sizeof(ans));
		ok += !strcmp(ans, "ok\n");
		refused += !strncmp(ans, "error: mark: too many marks", 27);
	}
	CHECK(ok >= 18 && ok < 40);
	CHECK_EQ(ok + refused, 40);
	CHECK_EQ(g.n, 2 + ok);
	argus_mark_server__stats(s, &st);
	CHECK_EQ(st.marks, (uint64_t)(2 + ok));
	CHECK_EQ(st.bad, (uint64_t)(7 + refused));
	argus_mark_server__free(s);
	CHECK(access(path, F_OK) && errno == ENOENT);
	snprintf(big, sizeof(big), "%s/run-mark", dir);
	rmdir(big);
	rmdir(dir);
}

/* One uid's silent connections take at most ARGUS_MARK_CONN_PER_UID
 * slots: the next one of that uid is told `busy` at once (another uid
 * would still get in: tests/e2e/mark_group.sh, which has two members). */
static void test_connections_per_uid(void)
{
	char dir[] = "/tmp/argus-test-mark.XXXXXX", path[300], ans[300], err[300];
	struct argus_mark_server_stats st;
	struct got g = { 0 };
	struct argus_mark_server *s;
	int silent[ARGUS_MARK_CONN_PER_UID];

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/run-mark/mark.sock", dir);
	s = argus_mark_server__new(path, getegid(), on_mark, &g, err, sizeof(err));
	CHECK(s != NULL);
	if (!s)
		return;
	for (int i = 0; i < ARGUS_MARK_CONN_PER_UID; i++) {
		silent[i] = dial(path);
		CHECK(silent[i] >= 0);
	}
	argus_mark_server__serve(s, now_ns());
	ask(s, path, "mark one more\n", 14, ans, sizeof(ans));
	CHECK(!strncmp(ans, "error: busy", 11));
	CHECK_EQ(g.n, 0);
	argus_mark_server__stats(s, &st);
	CHECK_EQ(st.busy, 1);
	/* once one goes, the uid gets its slot back */
	close(silent[0]);
	argus_mark_server__serve(s, now_ns());
	ask(s, path, "mark one more\n", 14, ans, sizeof(ans));
	CHECK(!strcmp(ans, "ok\n"));
	CHECK_EQ(g.n, 1);
	/* the uid's connections close while newcomers wait: one serve frees
	 * the closed ones' slots before it accepts, so the newcomers get in
	 * (it used to accept first and tell them all `busy`; with clients
	 * reconnecting as fast as they were refused, that never ended) */
	for (int i = 1; i < ARGUS_MARK_CONN_PER_UID; i++)
		close(silent[i]);
	argus_mark_server__serve(s, now_ns());     /* their slots freed */
	for (int i = 0; i < ARGUS_MARK_CONN_PER_UID; i++) {
		silent[i] = dial(path);
		CHECK(silent[i] >= 0);
	}
	argus_mark_server__serve(s, now_ns());     /* the uid's slots all taken */
	for (int i = 0; i < ARGUS_MARK_CONN_PER_UID; i++)
		close(silent[i]);
	{
		int nc[3], ok = 0;

		for (int i = 0; i < 3; i++) {
			nc[i] = dial(path);
			CHECK(nc[i] >= 0);
			CHECK(nc[i] < 0 || write(nc[i], "mark newcomer\n", 14) == 14);
		}
		argus_mark_server__serve(s, now_ns());
		for (int i = 0; i < 3; i++) {
			ssize_t n = nc[i] >= 0 ? recv(nc[i], ans, sizeof(ans) - 1, MSG_DONTWAIT) : -1;

			ans[n > 0 ? n : 0] = 0;
			ok += !strcmp(ans, "ok\n");
			if (nc[i] >= 0)
				close(nc[i]);
		}
		CHECK_EQ(ok, 3);
	}
	argus_mark_server__free(s);
	snprintf(path, sizeof(path), "%s/run-mark", dir);
	rmdir(path);
	rmdir(dir);
}

/* A symlink where the directory should be is refused, not followed. */
static void test_server_refuses_symlink(void)
{
	char dir[] = "/tmp/argus-test-mark.XXXXXX", link[200], path[300], err[300];
	struct got g = { 0 };
	struct argus_mark_server *s;

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(link, sizeof(link), "%s/run-mark", dir);
	CHECK(!symlink("/tmp", link));
	snprintf(path, sizeof(path), "%s/mark.sock", link);
	s = argus_mark_server__new(path, getegid(), on_mark, &g, err, sizeof(err));
	CHECK(s == NULL);
	CHECK(strstr(err, "not a directory") != NULL);
	argus_mark_server__free(s);
	unlink(link);
	rmdir(dir);
}

/* tests/unit/data/mark_v1.argus was written by argus-gen before marks had
 * fields (one mark, "phase ..." text, 301 events): its mark reads with
 * has_uid 0, i.e. "uid unknown" and not root. */
static void test_old_marks_read_as_unknown_uid(void)
{
	struct argus_error err = { 0 };
	struct argus_trace *t = argus_trace__open(ARGUS_MARK_V1_TRACE, &err);
	struct argus_event ev;
	int marks = 0, n = 0;

	CHECK(t != NULL);
	if (!t) {
		fprintf(stderr, "%s: %s\n", ARGUS_MARK_V1_TRACE, err.msg);
		return;
	}
	while (argus_trace__next(t, &ev, &err) > 0) {
		n++;
		if (ev.type != AE_MARK)
			continue;
		marks++;
		CHECK_EQ(ev.f[ARGUS_F_MARK_HAS_UID], 0);
		CHECK_EQ(ev.f[ARGUS_F_MARK_UID], 0);
		CHECK(ev.str && strlen(argus_trace__string(t, ev.str)) > 0);
	}
	CHECK_EQ(n, 301);
	CHECK_EQ(marks, 1);
	argus_trace__close(t);
}

int main(void)
{
	RUN(test_peer_check);
	RUN(test_group_database);
	RUN(test_text_rule);
	RUN(test_path);
	RUN(test_server);
	RUN(test_connections_per_uid);
	RUN(test_server_refuses_symlink);
	RUN(test_old_marks_read_as_unknown_uid);
	return check_report();
}
