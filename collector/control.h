/* control.h - the collector's control socket: a unix stream socket that
 * takes one request line and answers with text lines ending in "ok" or
 * "error: ...".
 *
 * Security: the socket lives in a 0700 directory owned by root and is
 * itself 0600; on top of that every peer is checked with SO_PEERCRED and
 * only uid 0 (or the daemon's own uid) is served.  Requests are bounded
 * (ARGUS_CONTROL_MAX bytes) and read with a timeout, so a slow or hostile
 * client cannot stall the collector. */
#ifndef ARGUS_CONTROL_H
#define ARGUS_CONTROL_H
#include <stddef.h>
#include <stdio.h>

#define ARGUS_CONTROL_MAX 4096
#define ARGUS_DEFAULT_RUN_DIR "/run/argus"
#define ARGUS_DEFAULT_RING_DIR "/var/lib/argus"

/* Directory of the socket and pid file: $ARGUS_RUN_DIR or /run/argus. */
const char *argus_run_dir(void);
/* Fills buf with "<run dir>/argusd.sock". */
void argus_control_path(char *buf, size_t len);

/* Creates the directory (0700) and a listening socket (0600), replacing a
 * stale socket.  Returns the fd or -errno (message in err). */
int argus_control__listen(const char *path, char *err, size_t errlen);

/* Handler: writes its answer to out; returns 0 for "ok", -errno for an
 * error, whose one-line message it wrote to out.  peer_pid is the client
 * process (SO_PEERCRED), so a mark can name who sent it. */
typedef int (*argus_control_fn)(void *ctx, const char *request, int peer_pid,
				FILE *out);

/* Serves every client waiting on lfd (non-blocking); returns 0 or -errno. */
int argus_control__serve(int lfd, argus_control_fn fn, void *ctx);

/* Client: sends one request, reads the whole answer into resp.
 * Returns 0 when the answer ends in "ok", 1 when it ends in an error
 * (resp holds the message), -errno when the daemon cannot be reached. */
int argus_control__request(const char *path, const char *request,
			   char *resp, size_t len, int timeout_ms);
#endif
