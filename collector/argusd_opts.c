/* argusd_opts.c - see argusd_opts.h: argusd's one table of flags. */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "argusd_opts.h"
#include "control.h"
#include "mark_socket.h"
#include "msg.h"
#include "parse_opts.h"
#include "units.h"

/* a threshold this long is no longer a hang anybody waits out */
#define THRESHOLD_MAX_NS (3600ull * 1000000000ull)

static const struct argus_usage daemon_usage = {
	.cmd = "argusd",
	.synopsis = "argusd [OPTION]... [--ready-fd FD]\n",
	.about =
	"  The always-on collector: records system-wide into a bounded ring file\n"
	"  DIR/ring.argus and answers argus's control socket.  Runs in the\n"
	"  foreground; normally started by `argus start`, or by systemd\n"
	"  (argus.service, options from /etc/default/argus; docs/install.md).\n"
	"  Needs root.  Each flag once, but --watch.\n",
};

static const struct argus_usage start_usage = {
	.cmd = "start",
	.synopsis = "argus start [OPTION]...\n",
	.about =
	"  Starts argusd in the background, which records system-wide into a\n"
	"  bounded ring file DIR/ring.argus, and waits until its BPF programs are\n"
	"  attached (or says why they could not be).  Needs root.  The options\n"
	"  are argusd's (argusd(8)), each once, but --watch.\n",
};

bool argusd_config_uid_watched(const struct argusd_config *cfg, uint32_t uid)
{
	if (cfg->any_uid)
		return true;
	for (size_t i = 0; i < cfg->nuids; i++)
		if (cfg->uids[i] == uid)
			return true;
	return false;
}

static int watch_cb(const char *cmd, const struct argus_opt *opt, const char *arg)
{
	struct argusd_config *cfg = opt->value;

	/* a pid, a tid or a comm: a comm has no '/', and a path is a mistake */
	if (!arg[0] || strchr(arg, '/'))
		return msg_usage_error(cmd, "--watch wants a pid or a process name, got '%s'",
				       msg_tstr(arg));
	cfg->watch[cfg->nwatch++] = arg; /* room: argc (argusd_config_init) */
	return 0;
}

/* --watch-uid 0,1000,alice or all */
static int watch_uid_cb(const char *cmd, const struct argus_opt *opt, const char *arg)
{
	struct argusd_config *cfg = opt->value;
	char buf[1024], *save = NULL;

	if (!strcmp(arg, "all")) {
		cfg->any_uid = true;
		return 0;
	}
	if (strlen(arg) >= sizeof(buf) || !arg[0])
		goto bad;
	memcpy(buf, arg, strlen(arg) + 1);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v;
		struct passwd *pw;

		errno = 0;
		v = strtoul(tok, &end, 10);
		if (tok[0] >= '0' && tok[0] <= '9' && !*end && !errno && v < UINT32_MAX) {
			/* a number */
		} else if ((pw = getpwnam(tok))) {
			v = pw->pw_uid;
		} else {
			return msg_usage_error(cmd, "--watch-uid '%s': no user '%s' (give uids or user"
					       " names, comma-separated, or all)", msg_tstr(arg),
					       msg_tstr(tok));
		}
		if (cfg->nuids >= ARGUSD_WATCH_UIDS_MAX)
			return msg_usage_error(cmd, "--watch-uid '%s': at most %d uids", msg_tstr(arg),
					       ARGUSD_WATCH_UIDS_MAX);
		if (!argusd_config_uid_watched(cfg, (uint32_t)v))
			cfg->uids[cfg->nuids++] = (uint32_t)v;
	}
	if (cfg->nuids)
		return 0;
bad:
	return msg_usage_error(cmd, "--watch-uid wants uids or user names, comma-separated, or all,"
			       " got '%s'", msg_tstr(arg));
}

/* MS, or a duration with its unit (2s) */
static int threshold_cb(const char *cmd, const struct argus_opt *opt, const char *arg)
{
	uint64_t *ns = opt->value, v;
	char *end;
	unsigned long ms;

	errno = 0;
	ms = strtoul(arg, &end, 10);
	if (arg[0] >= '0' && arg[0] <= '9' && !errno && !*end && ms > 0 && ms <= 3600000) {
		*ns = ms * 1000000ull;
		return 0;
	}
	if (!argus_parse_duration(arg, &v) && v >= 1000000 && v <= THRESHOLD_MAX_NS) {
		*ns = v;
		return 0;
	}
	return msg_usage_error(cmd, "--hang-threshold wants milliseconds from 1 to 3600000 (or a"
			       " duration like 2s), got '%s'", msg_tstr(arg));
}

/* 0 would mean the keeper's default: a 0 the user gave is 1 ns */
static int before_cb(const char *cmd, const struct argus_opt *opt, const char *arg)
{
	uint64_t *ns = opt->value, v;

	if (argus_parse_duration(arg, &v) || v > THRESHOLD_MAX_NS)
		return msg_usage_error(cmd, "--hang-before wants a duration of at most 1h, like"
				       " 10s or 1500ms, got '%s'", msg_tstr(arg));
	*ns = v ? v : 1;
	return 0;
}

static int max_mb_cb(const char *cmd, const struct argus_opt *opt, const char *arg)
{
	uint32_t mb;

	if (argus_opts_u32(cmd, "--hang-max-mb", arg, 1, 1048576, &mb))
		return 2;
	*(uint64_t *)opt->value = (uint64_t)mb << 20;
	return 0;
}

/* a group name as useradd takes it; never a path, never an option */
static int mark_group_cb(const char *cmd, const struct argus_opt *opt, const char *arg)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$";

	if (!arg[0] || strlen(arg) > 64 || strspn(arg, ok) != strlen(arg) || arg[0] == '-')
		return msg_usage_error(cmd, "--mark-group wants a group name, or none, got '%s'",
				       msg_tstr(arg));
	*(const char **)opt->value = arg;
	return 0;
}

int argusd_config_init(struct argusd_config *cfg, int argc)
{
	*cfg = (struct argusd_config){
		.dir = ARGUS_DEFAULT_RING_DIR,
		.size = 2ull << 30,
		.threshold_ns = 2000000000ull,
		.mark_group = ARGUS_DEFAULT_MARK_GROUP,
		.ready_fd = -1,
	};
	cfg->watch = calloc((size_t)(argc > 0 ? argc : 1), sizeof(*cfg->watch));
	return cfg->watch ? 0 : -ENOMEM;
}

void argusd_config_free(struct argusd_config *cfg)
{
	free(cfg->watch);
	cfg->watch = NULL;
	cfg->nwatch = 0;
}

#define ONCE(t, l, v, a, h) { OPT_(t, 0, l, v, a, h), .flags = ARGUS_OPT_ONCE }
#define ONCE_CB(l, v, a, h, fn) { OPT_(ARGUS_OPT_CALLBACK, 0, l, v, a, h), .flags = ARGUS_OPT_ONCE, .cb = (fn) }

int argusd_config_parse(struct argusd_config *cfg, bool for_start, int argc, char **argv,
			bool *help)
{
	const struct argus_opt opts[] = {
		ONCE(ARGUS_OPT_STRING, "dir", &cfg->dir, "DIR",
		     "where the ring file lives (default " ARGUS_DEFAULT_RING_DIR ")"),
		{ OPT_(ARGUS_OPT_SIZE, 0, "size", &cfg->size, "SIZE",
		       "the ring's size, like 512M or 2G (default 2G, at least 1M)"),
		  .flags = ARGUS_OPT_ONCE, .min = 1u << 20 },
		{ OPT_(ARGUS_OPT_U32, 0, "sample-hz", &cfg->sample_hz, "HZ",
		       "on-CPU stack samples per second (default 49)"),
		  .flags = ARGUS_OPT_ONCE, .min = 1, .max = 100000 },
		ONCE(ARGUS_OPT_BOOL, "no-irq", &cfg->no_irq, NULL,
		     "do not record irq/softirq/workqueue events"),
		ONCE(ARGUS_OPT_BOOL, "all-entries", &cfg->all_entries, NULL,
		     "also record the entries (sys_enter) of read/write/send/recv\n"
		     "calls; by default only their exits, which carry fd, object and\n"
		     "result: everything the graph uses"),
		ONCE(ARGUS_OPT_BOOL, "no-unwind", &cfg->no_unwind, NULL,
		     "frame-pointer stacks only, no DWARF unwinding of samples"),
		ONCE(ARGUS_OPT_BOOL, "wait-stacks", &cfg->wait_stacks, NULL,
		     "DWARF-unwindable stacks where threads block too (a 1 KiB\n"
		     "stack copy per blocking switch; more collector CPU)"),
		OPT_CALLBACK(0, "watch", cfg, "PID|COMM",
			     "watch that process (or thread), or every process of that\n"
			     "name, for hangs (repeatable); display servers' clients are\n"
			     "watched too unless --no-watch-interactive.  A hang (no\n"
			     "return for MS) is kept by itself in D: the ring from S\n"
			     "before it, with its diagnosis.  `argus hangs --saved` lists\n"
			     "them", watch_cb),
		ONCE_CB("watch-uid", cfg, "UIDS",
			"--watch COMM watches only the processes of these users (uids\n"
			"or user names, comma-separated, or all; default 0, root's\n"
			"only: any user can give a process any name).  --watch PID\n"
			"is not limited", watch_uid_cb),
		ONCE(ARGUS_OPT_BOOL, "no-watch-interactive", &cfg->no_interactive, NULL,
		     "do not watch the display servers' clients"),
		ONCE_CB("hang-threshold", &cfg->threshold_ns, "MS",
			"a watched thread that has not come back for MS is hung\n"
			"(default 2000)", threshold_cb),
		ONCE(ARGUS_OPT_STRING, "hang-dir", &cfg->hang_dir, "D",
		     "where hang snapshots are kept (default DIR/hangs)"),
		ONCE_CB("hang-before", &cfg->hang_before_ns, "S",
			"ring kept ahead of a hang's start (default 10s)", before_cb),
		{ OPT_(ARGUS_OPT_DURATION, 0, "hang-grace", &cfg->hang_grace_ns, "S",
		       "an ongoing hang is saved at threshold + S (default 3s)"),
		  .flags = ARGUS_OPT_ONCE, .min = 1, .max = THRESHOLD_MAX_NS },
		{ OPT_(ARGUS_OPT_U32, 0, "hang-keep", &cfg->hang_keep, "N",
		       "snapshots kept per uid, oldest removed first (default 20)"),
		  .flags = ARGUS_OPT_ONCE, .min = 1, .max = 100000 },
		ONCE_CB("hang-max-mb", &cfg->hang_max_bytes, "MB",
			"their total size at most (default 512; the uid holding the\n"
			"most loses its oldest first)", max_mb_cb),
		ONCE_CB("mark-group", &cfg->mark_group, "NAME|none",
			"members of group NAME may send `argus mark` (only that)\n"
			"through <run dir>-mark/mark.sock (default "
			ARGUS_DEFAULT_MARK_GROUP "; none: marks are root-only)", mark_group_cb),
		/* argus start writes this one itself */
		{ OPT_(ARGUS_OPT_U32, 0, "ready-fd", &cfg->ready_fd, "FD",
		       "write \"ready\" or the error to FD, then close it"),
		  .flags = ARGUS_OPT_ONCE | (for_start ? ARGUS_OPT_HIDDEN : 0), .min = 0,
		  .max = 65535 },
		OPT_END(),
	};
	const struct argus_usage *u = for_start ? &start_usage : &daemon_usage;
	int rest = argus_opts_parse(u, opts, argc, argv, 0);

	*help = rest == ARGUS_OPT_HELP;
	if (rest < 0)
		return argus_opts_exit(rest);
	if (rest > 0)
		return msg_usage_error(u->cmd, "unexpected argument '%s'", msg_tstr(argv[0]));
	if (for_start && cfg->ready_fd >= 0)
		return msg_usage_error(u->cmd, "--ready-fd is argusd's own: argus start sets it");
	return 0;
}
