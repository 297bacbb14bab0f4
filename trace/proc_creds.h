/* proc_creds.h - a process's credentials as /proc shows them, to tell a
 * credential change (argusd's interposer rings, the live commands' exec
 * rule).  libc only: collector/interpose_ring.c's test and fuzz targets
 * compile it in directly. */
#ifndef ARGUS_PROC_CREDS_H
#define ARGUS_PROC_CREDS_H
#include <stddef.h>
#include <stdint.h>

/* The "Uid:" and "Gid:" lines (real, effective, saved, fs ids) of the
 * status file in dirfd, a /proc/PID or /proc/PID/task/TID directory,
 * joined with ';' into out: compared whole, they tell a credential change.
 * *euid and *egid (either may be NULL) get the effective ids.  0, -errno,
 * or -EIO when a line is missing or out is too short. */
int argus_proc_creds(int dirfd, char *out, size_t len, uint32_t *euid, uint32_t *egid);
#endif
