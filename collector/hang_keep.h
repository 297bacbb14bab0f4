/* hang_keep.h - argusd keeps a snapshot of each live hang, with its
 * diagnosis, in a bounded directory (the paper's spindump trigger).
 *
 * The watcher (hang_watch.h) reports a hang when it crosses the threshold
 * and when it ends.  The keeper then waits until the hang ended (plus a
 * short tail, so the wake-up that ended it is in) or until threshold +
 * grace after it began if it is still going, and saves the ring from
 * `before_ns` ahead of its start.  The save is `argus save`'s own copy
 * (argus_trace__save(): raw chunks, not re-encoded), done with the
 * collector flushed first, like the "flush" control request.  The copy
 * and the diagnosis run in a child process at nice 19, so the drain loop
 * never waits for them:
 *
 *   DIR/<time>-<comm>-<pid>.argus  the snapshot, 0600, O_EXCL|O_NOFOLLOW
 *   DIR/<time>-<comm>-<pid>.json   what was seen live, and the output of
 *                                  `argus diagnose SNAP --pid P --json`
 *                                  (written to .json.tmp, then renamed)
 *
 * <time> is the local wall-clock time the hang began, YYYYmmdd-HHMMSS.
 *
 * Every bound is per uid (the hung process's real uid, the .json's
 * "uid"), so that one user's hangs never push out another's: at most
 * ARGUS_HANG_PEND_PER_UID hangs of a uid wait for their save (more are
 * dropped and counted), saves alternate between uids, and after each
 * save the directory is pruned, oldest first, to `keep` snapshots per
 * uid; then, while the whole directory is over `max_bytes` (snapshots,
 * their .json and .html together), the uid holding the most bytes loses
 * its oldest.  Each uid's newest snapshot is always kept.  One save runs
 * at a time; others wait.  The diagnosis runs under an address-space
 * limit (ARGUS_HANG_DIAG_AS_MB): a snapshot too big to diagnose in it is
 * kept without a diagnosis.
 *
 * The library never prints: messages go to opts.log.
 */
#ifndef ARGUS_HANG_KEEP_H
#define ARGUS_HANG_KEEP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "hang_watch.h"

#define ARGUS_DEFAULT_HANG_DIR "/var/lib/argus/hangs"
/* hangs of one uid waiting for their save at once */
#define ARGUS_HANG_PEND_PER_UID 4
/* hangs waiting for their save at once, all uids together */
#define ARGUS_HANG_PEND_MAX 64
/* address space of the keeper's diagnosis (RLIMIT_AS), MiB */
#define ARGUS_HANG_DIAG_AS_MB 2048

struct argus_hang_keeper;

struct argus_hang_keeper_opts {
	size_t sz;              /* sizeof(struct argus_hang_keeper_opts) */
	const char *dir;        /* NULL = ARGUS_DEFAULT_HANG_DIR */
	uint64_t threshold_ns;  /* the watcher's; 0 = 2 s */
	uint64_t before_ns;     /* ring kept ahead of the hang; 0 = 10 s */
	uint64_t grace_ns;      /* save an ongoing hang at threshold + grace;
	                           0 = 3 s */
	uint32_t keep;          /* snapshots kept per uid; 0 = 20 */
	uint64_t max_bytes;     /* bytes kept, all uids; 0 = 512 MiB */
	/* The analysis session (analysis/argus_session.h), handed in by
	 * argusd: runs the words argv (argv[0] "diagnose" or "report", then
	 * diagnose's words) with what `argus` would print on stdout and
	 * stderr written to fds 1 and 2, and returns its exit code.  Called
	 * in a child process of its own (a time limit, nothing shared with
	 * argusd).  NULL = keep snapshots without a diagnosis. */
	int (*analyze)(void *ctx, int argc, char **argv);
	void *analyze_ctx;
	void (*log)(void *ctx, const char *line); /* one line, no '\n' */
	void *log_ctx;
};

/* Creates the directory (0700, missing parents too) and checks that it is
 * a real directory of ours that nobody else can write; prunes it to the
 * bounds.  NULL and errno on failure, with one line in err. */
struct argus_hang_keeper *argus_hang_keeper__new(const struct argus_hang_keeper_opts *opts,
						 char *err, size_t errlen);
/* Waits up to wait_ms for running saves, kills what is left, frees.
 * Accepts NULL. */
void argus_hang_keeper__free(struct argus_hang_keeper *k, int wait_ms);

/* The watcher's report (an argus_hang_fn). */
void argus_hang_keeper__on_hang(void *k, enum argus_hang_change what,
				const struct argus_live_hang *h);
/* True when a save is due at now_ns: flush the collector, then __run(). */
bool argus_hang_keeper__due(const struct argus_hang_keeper *k, uint64_t now_ns);
/* Starts the save that is due (from the ring file ring_path), reaps saves
 * that finished and prunes after them.  0 or -errno. */
int argus_hang_keeper__run(struct argus_hang_keeper *k, uint64_t now_ns,
			   const char *ring_path);

struct argus_hang_keeper_status {
	uint64_t kept;          /* snapshots written */
	uint64_t removed;       /* snapshots pruned (oldest first) */
	uint64_t failed;        /* saves that failed */
	uint64_t rejected;      /* reports the full model rejected: dropped */
	uint64_t dropped;       /* hangs not saved: their uid had
	                           ARGUS_HANG_PEND_PER_UID waiting already
	                           (or all uids ARGUS_HANG_PEND_MAX) */
	uint32_t pending;       /* hangs waiting for their save */
	uint32_t in_dir;        /* snapshots in the directory after the last prune */
};
void argus_hang_keeper__status(const struct argus_hang_keeper *k,
			       struct argus_hang_keeper_status *st);
const char *argus_hang_keeper__dir(const struct argus_hang_keeper *k);

/* A snapshot in a hang directory. */
struct argus_hang_file {
	char name[256];         /* "<time>-<comm>-<pid>.argus" */
	uint64_t bytes;         /* the snapshot and its .json */
	struct timespec mtime;  /* the snapshot's */
	bool has_json;
	uint32_t uid;           /* the .json's "uid"; ARGUS_HANG_UID_UNKNOWN
	                           without one */
};
#define ARGUS_HANG_UID_UNKNOWN UINT32_MAX
/* The snapshots in dir (regular files named *.argus, not symlinks), newest
 * first.  *files is malloc'd (free it).  0 or -errno. */
int argus_hang_dir__list(const char *dir, struct argus_hang_file **files, size_t *n);
#endif
