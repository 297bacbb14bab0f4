/* ctl_client.h - the front ends' side of the running collector: where
 * argusd lives, one request on its control socket, and a snapshot of its
 * ring (the "live ring through argusd" every front end opens).
 * Errors are one msg_error() line each (msg.h). */
#ifndef ARGUS_CTL_CLIENT_H
#define ARGUS_CTL_CLIENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Directory of the running program's binary (for argusd beside argus),
 * or the one set by ctl_set_bin_dir() when the analysis runs inside
 * another program (lldb: the bin dir beside the plugin's lib dir). */
void ctl_bin_dir(char *buf, size_t len);
void ctl_set_bin_dir(const char *dir);
/* Sends a request to the running collector; prints a clear error and
 * returns non-zero if it is not running. */
int ctl_request(const char *cmd, const char *req, char *resp, size_t len);
/* Asks the running collector to write out what it holds ("flush"): the
 * path of its ring into ring (len bytes) and its CLOCK_MONOTONIC now.
 * 0, or 1 after an error line. */
int ctl_ring_flush(const char *cmd, char *ring, size_t len, uint64_t *now);
/* Flushes the collector (ctl_ring_flush) and copies its ring's chunks from
 * *from_ts on into a new snapshot out (argus_trace__save_to, out_flags
 * ARGUS_OUT_*: safe_file.h).  *from_ts 0: the last `last` ns before the
 * collector's now, set to where that began (0, the whole ring, when last
 * is 0 or the ring is younger).  A warning line when corrupt chunks were
 * skipped; with progress, a progress line on a terminal.  0, or 1 after
 * an error line. */
int ctl_ring_save(const char *cmd, const char *out, unsigned out_flags, uint64_t last,
		  uint64_t *from_ts, bool progress);
#include <stdio.h>
/* Arm a write watch on [addr, addr+len) of process pid through the
 * collector (`argus watch --pid --addr --len [--reader]`), after checking
 * the process and the reader thread exist; the "argus: watch N armed"
 * line goes to out, the watch id to *id (may be NULL).  0, or 1 after one
 * error line (prefixed with cmd). */
int ctl_watch_arm(const char *cmd, uint64_t pid, uint64_t addr, uint64_t len, uint64_t reader,
		  FILE *out, int *id);
#endif
