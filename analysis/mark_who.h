/* mark_who.h - who sent a mark: its pid/tid and uid, from the trace.
 *
 * The graph keeps a mark's time and text, not its fields (the uid), so
 * `argus hangs` and `argus diagnose` look the mark up in the trace: only
 * the chunks that overlap the hang are decoded again, each alone (a
 * chunk is self-describing), not the whole trace. */
#ifndef ARGUS_MARK_WHO_H
#define ARGUS_MARK_WHO_H
#include <stdbool.h>
#include <stdint.h>

struct argus_trace;

struct cli_mark_who {
	uint32_t pid, tid;
	uint32_t uid;
	bool has_uid;           /* false: a mark of an older collector */
};

/* The first AE_MARK in [from, to] whose text is text (NULL or "": any):
 * 0 and *who filled, -ENOENT if none, other -errno. */
int cli_mark_who(struct argus_trace *t, const char *text, uint64_t from, uint64_t to,
		 struct cli_mark_who *who);
#endif
