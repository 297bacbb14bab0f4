/* display_clients.h - which processes are connected to a display server
 * (argusd watches them for hangs by default: they are the interactive
 * ones).
 *
 * A display server listens on a unix socket named /tmp/.X11-unix/X<n>
 * (X11; also in the abstract namespace, @/tmp/.X11-unix/X<n>) or
 * <dir>/wayland-<name> (Wayland, normally in $XDG_RUNTIME_DIR).  On Linux
 * the server's end of each accepted connection carries the listener's
 * name, so the clients' socket inodes are the peers of the server-side
 * sockets with such a name (and those of connections still waiting to be
 * accepted).  One sock_diag netlink dump of the unix sockets finds them;
 * only when an inode appears that an earlier scan did not see are the
 * processes' /proc/PID/fd links read to find who holds it.
 *
 * The library never prints.
 */
#ifndef ARGUS_DISPLAY_CLIENTS_H
#define ARGUS_DISPLAY_CLIENTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct argus_display_scan;

struct argus_display_scan *argus_display_scan__new(void);
void argus_display_scan__free(struct argus_display_scan *s);

/* The processes holding a client end of a display connection that no
 * earlier call reported (each is reported once per connection).  *pids is
 * malloc'd; free it.  0 or -errno (-EOPNOTSUPP: no unix sock_diag). */
int argus_display_scan__poll(struct argus_display_scan *s, uint32_t **pids, size_t *n);

/* Is this a display server's socket name?  (name as sock_diag gives it:
 * a leading NUL for the abstract namespace; len bytes, not terminated.) */
bool argus_display_socket_name(const char *name, size_t len);
#endif
