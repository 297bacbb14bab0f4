/* argusd_opts.h - argusd's flags: one table (argusd_opts.c) that both
 * argusd and `argus start` parse, so a flag is checked once, by the same
 * words, and `argus start --help` is argusd's help (its synopsis aside).
 *
 * `argus start` parses the command line it is given with this table
 * first; only a line that parses is handed on to argusd, unchanged, with
 * --ready-fd added.  argusd parses it again into the values it runs with.
 *
 * Invariant: a field is written only when its flag is given and good
 * (parse_opts.h); argusd_config_init() sets the defaults.  The strings
 * point into argv. */
#ifndef ARGUS_ARGUSD_OPTS_H
#define ARGUS_ARGUSD_OPTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* at most this many uids in --watch-uid */
#define ARGUSD_WATCH_UIDS_MAX 64

struct argusd_config {
	const char *dir;             /* --dir: the ring's directory */
	uint64_t size;               /* --size: the ring's bytes */
	uint32_t sample_hz;          /* --sample-hz; 0: the probe's default */
	bool no_irq, all_entries, no_unwind, wait_stacks;
	bool no_interactive;         /* --no-watch-interactive */
	const char **watch;          /* --watch PID|COMM, in order: nwatch of them */
	size_t nwatch;
	/* --watch-uid: whose processes --watch COMM watches (any_uid: all);
	 * none given: nuids 0, and argusd watches root's only */
	uint32_t uids[ARGUSD_WATCH_UIDS_MAX];
	size_t nuids;
	bool any_uid;
	uint64_t threshold_ns;       /* --hang-threshold */
	const char *hang_dir;        /* --hang-dir; NULL: DIR/hangs */
	uint64_t hang_before_ns;     /* --hang-before; 0: the keeper's default */
	uint64_t hang_grace_ns;      /* --hang-grace; 0: the keeper's default */
	uint32_t hang_keep;          /* --hang-keep; 0: the keeper's default */
	uint64_t hang_max_bytes;     /* --hang-max-mb, in bytes; 0: the default */
	const char *mark_group;      /* --mark-group NAME or "none" */
	int ready_fd;                /* --ready-fd (argusd's own); -1 none */
};

/* The defaults.  Returns 0, or -ENOMEM (the --watch list is sized by argc). */
int argusd_config_init(struct argusd_config *cfg, int argc);
void argusd_config_free(struct argusd_config *cfg);

/* Parses argv[1..argc) (argv[0] the program) into cfg.  for_start: the
 * command is `argus start` (its errors read "argus start: ...", and
 * --ready-fd, which start sets itself, is refused).  Returns 0, or the
 * exit code after the help (0, with *help set) or a usage error (2). */
int argusd_config_parse(struct argusd_config *cfg, bool for_start, int argc, char **argv,
			bool *help);
/* Whether uid is one --watch-uid names (any_uid: every uid). */
bool argusd_config_uid_watched(const struct argusd_config *cfg, uint32_t uid);
#endif
