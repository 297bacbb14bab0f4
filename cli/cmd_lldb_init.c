/* cmd_lldb_init.c - `argus lldb-init`: make lldb load the Argus plugin at
 * start, by adding one `plugin load` line to ~/.lldbinit.
 *
 * The file belongs to the user and may hold anything: it is read whole,
 * only the Argus lines (the marker comment and `plugin load` lines naming
 * libargus-lldb.so) are dropped or added, and it is replaced atomically
 * (temp file + rename, same mode and owner).  A symlinked ~/.lldbinit
 * (dotfile managers) is followed for its owner, never by root (who would
 * rewrite whatever the link names); a FIFO or other non-regular file is
 * refused without blocking.
 *
 * Where the plugin is: beside the argus binary, in the lib dir the build
 * or `cmake --install` put it (ARGUS_BIN_TO_LIB, the relative path from
 * the install's bin dir to its lib dir, e.g. ../lib/x86_64-linux-gnu), or
 * ../lib as in the build tree. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifndef ARGUS_BIN_TO_LIB
#define ARGUS_BIN_TO_LIB "../lib"
#endif

#define PLUGIN_NAME "libargus-lldb.so"
#define MARKER "# argus lldb-init: load the Argus plugin (argus lldb-init --remove takes it out)"
#define MAX_INIT (4u << 20)     /* a bigger ~/.lldbinit is not one we should rewrite */

/* The plugin beside this argus: the first candidate that exists. */
static int find_plugin(char *out, size_t len)
{
	static const char *const rel[] = { ARGUS_BIN_TO_LIB, "../lib" };
	char dir[PATH_MAX], cand[PATH_MAX + 64];

	ctl_bin_dir(dir, sizeof(dir));
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/%s/" PLUGIN_NAME, dir, rel[i]);
		if (realpath(cand, out) && strlen(out) < len)
			return 0;
	}
	return msg_error("lldb-init", "no lldb plugin beside argus (looked for %s/%s/" PLUGIN_NAME
			 "): it is built only where liblldb-16-dev is installed (scripts/install-deps.sh)"
			 " and not in a sanitizer build; or give --plugin SO", dir, ARGUS_BIN_TO_LIB);
}

/* The lldb command that loads path: quoted when it has blanks.  lldb's
 * own quoting cannot carry a quote, backslash or newline: refused. */
static int load_line(const char *path, char *out, size_t len)
{
	if (strpbrk(path, "\"'`\\\n\r"))
		return msg_usage_error("lldb-init", "the plugin path '%s' has a quote, backslash or newline,"
				       " which an lldb command line cannot hold", path);
	snprintf(out, len, strpbrk(path, " \t") ? "plugin load \"%s\"" : "plugin load %s", path);
	return 0;
}

/* ~/.lldbinit of the user running argus. */
static int default_init(char *out, size_t len)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (!home || !*home) {
		pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home || !*home)
		return msg_error("lldb-init", "no home directory (HOME is unset): give --file LLDBINIT");
	if ((size_t)snprintf(out, len, "%s/.lldbinit", home) >= len)
		return msg_error("lldb-init", "the home directory path is too long: give --file LLDBINIT");
	return 0;
}

/* The whole file into *buf (NUL-terminated); a missing file is empty. */
static int read_init(const char *path, char **buf, size_t *n, struct stat *st, bool *exists)
{
	/* O_NONBLOCK|O_NOFOLLOW: a FIFO must not block us, a link swapped
	 * in since the check must not be followed */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	size_t got;

	*exists = false;
	*n = 0;
	*buf = calloc(1, MAX_INIT + 1);
	if (!*buf) {
		if (f)
			fclose(f);
		else if (fd >= 0)
			close(fd);
		return msg_error("lldb-init", "out of memory");
	}
	if (!f) {
		if (errno == ENOENT)
			return 0;
		if (fd >= 0)
			close(fd);
		return msg_error("lldb-init", "cannot read %s: %s", path, strerror(errno));
	}
	if (fstat(fileno(f), st) || !S_ISREG(st->st_mode)) {
		fclose(f);
		return msg_error("lldb-init", "%s is not a regular file: not touching it", path);
	}
	got = fread(*buf, 1, MAX_INIT + 1, f);
	if (ferror(f) || got > MAX_INIT) {
		fclose(f);
		return msg_error("lldb-init", "%s: %s", path, got > MAX_INIT ? "larger than 4 MiB: not touching it"
								      : strerror(errno));
	}
	fclose(f);
	(*buf)[got] = 0;
	if (memchr(*buf, 0, got))
		return msg_error("lldb-init", "%s holds NUL bytes: not an lldb command file, not touching it", path);
	*n = got;
	*exists = true;
	return 0;
}

/* One of ours: the marker, or a `plugin load` of libargus-lldb.so. */
static bool argus_line(const char *l, size_t n)
{
	size_t m = strlen(MARKER);
	char line[PATH_MAX + 64];

	if (n >= sizeof(line))
		return false;
	memcpy(line, l, n);
	line[n] = 0;
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r' ||
		     line[n - 1] == '"'))
		line[--n] = 0;
	if (n == m && !memcmp(line, MARKER, m))
		return true;
	l = line + strspn(line, " \t");
	return !strncmp(l, "plugin load", 11) && n >= strlen(PLUGIN_NAME) &&
	       !strcmp(line + n - strlen(PLUGIN_NAME), PLUGIN_NAME) &&
	       (line[n - strlen(PLUGIN_NAME) - 1] == '/' || line[n - strlen(PLUGIN_NAME) - 1] == ' ' ||
		line[n - strlen(PLUGIN_NAME) - 1] == '"');
}

/* text without our lines into out (capacity >= n + 1); how many went. */
static unsigned strip(const char *text, size_t n, char *out, size_t *outn)
{
	unsigned dropped = 0;
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (text + i)) : n - i;

		if (argus_line(text + i, len)) {
			dropped++;
		} else {
			memcpy(out + o, text + i, len);
			o += len;
			if (nl)
				out[o++] = '\n';
		}
		i += len + (nl ? 1 : 0);
	}
	out[o] = 0;
	*outn = o;
	return dropped;
}

/* text as path's new content: a temp file beside it, same mode and owner,
 * synced, renamed over it. */
static int replace_file(const char *path, const char *text, size_t n, const struct stat *st,
			bool exists)
{
	char tmp[PATH_MAX + 16];
	struct stat dir;
	char *slash;
	int fd, rc = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp))
		return msg_error("lldb-init", "%s: path too long", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return msg_error("lldb-init", "cannot write beside %s: %s", path, strerror(errno));
	if (exists) {
		if (fchmod(fd, st->st_mode & 07777) || (geteuid() == 0 && fchown(fd, st->st_uid, st->st_gid)))
			rc = errno;
	} else {
		/* a new file: like the user's other dotfiles, owned by the
		 * directory's owner when root writes into someone's home */
		char d[PATH_MAX];

		snprintf(d, sizeof(d), "%s", path);
		slash = strrchr(d, '/');
		if (slash)
			*slash = 0;
		if (fchmod(fd, 0644) ||
		    (geteuid() == 0 && !stat(slash ? (d[0] ? d : "/") : ".", &dir) &&
		     fchown(fd, dir.st_uid, dir.st_gid)))
			rc = errno;
	}
	for (size_t done = 0; !rc && done < n;) {
		ssize_t w = write(fd, text + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			rc = w < 0 ? errno : EIO;
		else
			done += (size_t)w;
	}
	if (!rc && fsync(fd))
		rc = errno;
	if (close(fd) && !rc)
		rc = errno;
	if (!rc && rename(tmp, path))
		rc = errno;
	if (rc) {
		unlink(tmp);
		return msg_error("lldb-init", "cannot write %s: %s (left as it was)", path, strerror(rc));
	}
	return 0;
}

static const struct argus_usage usage = {
	.cmd = "lldb-init",
	.synopsis = "argus lldb-init [--file LLDBINIT] [--plugin SO] [--print | --remove]\n",
	.about =
	"  Adds `plugin load .../libargus-lldb.so` to LLDBINIT (default ~/.lldbinit\n"
	"  of the user running it: run it as the user who runs lldb, e.g. as root\n"
	"  for lldb-16 run as root).  Idempotent; an older Argus line is replaced.\n",
};

int cmd_lldb_init(int argc, char **argv)
{
	const char *file = NULL, *plugin = NULL;
	bool print = false, remove = false, exists;
	char plug[PATH_MAX], line[PATH_MAX + 32] = "", init[PATH_MAX], real[PATH_MAX];
	struct stat lst;
	char *text = NULL, *out = NULL;
	size_t n, outn;
	struct stat st = { 0 };
	unsigned dropped;
	int rc;

	const struct argus_opt opts[] = {
		OPT_STRING(0, "file", &file, "LLDBINIT", "the file to change (default ~/.lldbinit)"),
		OPT_STRING(0, "plugin", &plugin, "SO",
			   "the plugin to load (default: the one installed beside argus)"),
		OPT_BOOL(0, "print", &print, "print the line, change nothing"),
		OPT_BOOL(0, "remove", &remove, "take the Argus lines out again"),
		OPT_END(),
	};

	if ((rc = argus_opts_parse(&usage, opts, argc, argv, 0)) < 0)
		return argus_opts_exit(rc);
	if (rc)
		return msg_usage_error("lldb-init", "unexpected argument '%s'", msg_tstr(argv[0]));
	if (print && remove)
		return msg_usage_error("lldb-init", "--print and --remove do not go together");

	if (!remove) {
		if (plugin) {
			if (!realpath(plugin, plug))
				return msg_error("lldb-init", "--plugin %s: %s", plugin, strerror(errno));
		} else if ((rc = find_plugin(plug, sizeof(plug)))) {
			return rc;
		}
		if ((rc = load_line(plug, line, sizeof(line))))
			return rc;
		if (print) {
			printf("%s\n", line);
			return 0;
		}
	}
	if (file)
		snprintf(init, sizeof(init), "%s", file);
	else if ((rc = default_init(init, sizeof(init))))
		return rc;
	if (!lstat(init, &lst) && S_ISLNK(lst.st_mode)) {
		/* A symlinked ~/.lldbinit (dotfile managers) is followed for its
		 * owner.  Root does not follow a link someone else may have
		 * placed: it would rewrite whatever file the link names. */
		if (geteuid() == 0)
			return msg_error("lldb-init", "%s is a symbolic link: as root, not following it"
					 " (give --file with the file it should edit)", init);
		if (!realpath(init, real))
			return msg_error("lldb-init", "%s is a symbolic link to nothing (%s): create its"
					 " target first, or give --file", init, strerror(errno));
		snprintf(init, sizeof(init), "%s", real);
	}

	if ((rc = read_init(init, &text, &n, &st, &exists)))
		goto out;
	rc = 1;
	out = malloc(n + strlen(MARKER) + strlen(line) + 4);
	if (!out) {
		msg_error("lldb-init", "out of memory");
		goto out;
	}
	dropped = strip(text, n, out, &outn);
	if (remove) {
		if (!dropped) {
			printf("argus lldb-init: no Argus line in %s, nothing to remove\n", init);
			rc = 0;
			goto out;
		}
		if ((rc = replace_file(init, out, outn, &st, exists)))
			goto out;
		printf("argus lldb-init: removed %u Argus line%s from %s\n", dropped, dropped == 1 ? "" : "s",
		       init);
		goto out;
	}
	if (outn && out[outn - 1] != '\n')
		out[outn++] = '\n';
	outn += (size_t)sprintf(out + outn, "%s\n%s\n", MARKER, line);
	if (exists && outn == n && !memcmp(out, text, n)) {
		printf("argus lldb-init: %s already loads %s\n", init, plug);
		rc = 0;
		goto out;
	}
	if ((rc = replace_file(init, out, outn, &st, exists)))
		goto out;
	printf("argus lldb-init: %s %s: lldb will run `%s` at start\n",
	       dropped ? "updated" : "added the plugin to", init, line);
out:
	free(text);
	free(out);
	return rc;
}
