/* proc_locks.c - who holds a lock now, on the running system: the holder
 * of a file lock (/proc/locks, /proc/PID/fdinfo), and the owner of a
 * glibc mutex or of a PI futex (/proc/PID/mem).  For a wait still open at a live snapshot
 * (`diagnose --live`, the lldb plugin), where the trace may not have seen
 * the lock being taken (it was taken before the ring's oldest chunk).
 *
 * /proc/locks, one lock per line (fs/locks.c, lock_get_status()):
 *     1: FLOCK  ADVISORY  WRITE 3889 fe:00:1234 0 EOF
 *     1: -> FLOCK  ADVISORY  WRITE 3890 fe:00:1234 0 EOF
 *     2: POSIX  ADVISORY  READ  3901 fe:00:5678 1073741826 1073742335
 *     3: OFDLCK ADVISORY  WRITE -1 fe:00:9abc 0 EOF
 * "->" lines are waiters blocked on the lock above them, not holders.
 * The device is MAJOR:MINOR of the inode's s_dev in hex, the inode in
 * decimal.  The pid is the process that took the lock; an OFD lock
 * belongs to an open file description and shows -1.  Then (and when the
 * taker has exited while a child that inherited the descriptor keeps the
 * lock, as `flock FILE CMD` does) the holders are found in
 * /proc/PID/fdinfo/FD: its "lock:" lines list the locks owned by that
 * open file (flock, OFD) or by that process (POSIX) on it.
 *
 * The trace's file object is what resolve_fd() in kernel-patch/argus.bpf.c
 * computes: obj = (u64)inode->i_sb->s_dev << 32 ^ inode->i_ino, where
 * s_dev is the kernel's dev_t, MKDEV(major, minor) = major << 20 | minor
 * (not the user-space st_dev encoding).  A /proc/locks line matches when
 * its MAJOR:MINOR:INODE give the same value the same way, so an inode
 * number wider than 32 bits matches exactly too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag_front.h"

/* resolve_fd()'s object for a /proc/locks device and inode */
static uint64_t file_obj(unsigned maj, unsigned min, uint64_t ino)
{
	return ((uint64_t)((maj << 20) | (min & 0xfffff)) << 32) ^ ino;
}

struct lock_line {
	bool waiter;            /* "->": blocked on the lock, not holding it */
	char type[16];          /* FLOCK, POSIX, OFDLCK, (LEASE, DELEG...) */
	long pid;               /* -1 for OFD locks */
	uint64_t obj;           /* as file_obj() */
};

/* One line of /proc/locks or one fdinfo "lock:" line, after its "N:"; 0,
 * or -1 when it does not parse. */
static int parse_lock(const char *s, struct lock_line *l)
{
	char mode[16], rw[16];
	unsigned maj, min;
	uint64_t ino;
	int n = 0;

	memset(l, 0, sizeof(*l));
	while (*s == ' ' || *s == '\t')
		s++;
	if (!strncmp(s, "->", 2)) {
		l->waiter = true;
		s += 2;
	}
	if (sscanf(s, " %15s %15s %15s %ld %x:%x:%" SCNu64 "%n", l->type, mode, rw, &l->pid,
		   &maj, &min, &ino, &n) != 7 || !n)
		return -1;
	l->obj = file_obj(maj, min, ino);
	return 0;
}

static bool lock_type(const char *t)
{
	return !strcmp(t, "FLOCK") || !strcmp(t, "POSIX") || !strcmp(t, "OFDLCK");
}

bool diag_front_pid_alive(int64_t pid)
{
	char path[48], line[128];
	bool found = false;
	FILE *f;

	if (pid <= 0 || pid > INT32_MAX)
		return false;
	/* /proc/TID exists for every thread too (hidden from readdir):
	 * a process is a thread group's leader, its Tgid its own id */
	snprintf(path, sizeof(path), "/proc/%" PRId64 "/status", pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		long tgid;

		if (sscanf(line, "Tgid: %ld", &tgid) == 1) {
			found = tgid == pid;
			break;
		}
	}
	fclose(f);
	return found;
}

uint32_t diag_front_pid_add(uint32_t *pids, uint32_t n, uint32_t max, uint32_t pid)
{
	for (uint32_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return n;
	if (n < max)
		pids[n++] = pid;
	return n;
}

/* Does one of the fdinfo files of process pid show a held lock of type
 * `type` on obj? */
static bool fdinfo_holds(unsigned long pid, const char *type, uint64_t obj)
{
	char path[64], line[256];
	struct dirent *f;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%lu/fdinfo", pid);
	if (!(d = opendir(path)))
		return false;   /* gone, a kernel thread, or not ours to read */
	while (!found && (f = readdir(d))) {
		FILE *fi;

		if (f->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%lu/fdinfo/%.16s", pid, f->d_name);
		if (!(fi = fopen(path, "re")))
			continue;
		while (!found && fgets(line, sizeof(line), fi)) {
			struct lock_line l;
			char *c;

			/* "lock:\t1: OFDLCK ADVISORY  WRITE -1 fe:00:1234 0 EOF" */
			if (strncmp(line, "lock:", 5) || !(c = strchr(line + 5, ':')))
				continue;
			found = !parse_lock(c + 1, &l) && !l.waiter && l.obj == obj &&
				!strcmp(l.type, type);
		}
		fclose(fi);
	}
	closedir(d);
	return found;
}

/* Every process whose fdinfo shows a held lock of `type` on obj. */
static uint32_t fdinfo_holders(const char *type, uint64_t obj, uint32_t *pids, uint32_t n,
			       uint32_t max)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;

	if (!proc)
		return n;
	while (n < max && (p = readdir(proc))) {
		char *end;
		unsigned long pid = strtoul(p->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		if (fdinfo_holds(pid, type, obj))
			n = diag_front_pid_add(pids, n, max, (uint32_t)pid);
	}
	closedir(proc);
	return n;
}

/* /proc/locks' holders of file; with fdinfo, those only
 * /proc/PID/fdinfo names too (OFD locks, a taker gone), else *unresolved
 * says there are such locks. */
static uint32_t lock_holders(uint64_t file, uint32_t *pids, uint32_t max, bool fdinfo,
			     bool *unresolved)
{
	char line[256], searched[3][16];
	uint32_t n = 0, nsearched = 0;
	FILE *f = fopen("/proc/locks", "re");

	if (unresolved)
		*unresolved = false;
	if (!f || !max) {
		if (f)
			fclose(f);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		struct lock_line l;
		char *c = strchr(line, ':');
		uint32_t i;

		if (!c || parse_lock(c + 1, &l) || l.waiter || l.obj != file || !lock_type(l.type))
			continue;
		if (diag_front_pid_alive(l.pid)) {
			n = diag_front_pid_add(pids, n, max, (uint32_t)l.pid);
			continue;
		}
		/* an OFD lock (-1), or a taker that is gone while the lock
		 * lives on in an inherited descriptor: once per type */
		if (unresolved)
			*unresolved = true;
		if (!fdinfo)
			continue;
		for (i = 0; i < nsearched && strcmp(searched[i], l.type); i++)
			;
		if (i < nsearched || nsearched == 3)
			continue;
		snprintf(searched[nsearched++], sizeof(searched[0]), "%s", l.type);
		n = fdinfo_holders(l.type, file, pids, n, max);
	}
	fclose(f);
	return n;
}

uint32_t diag_front_proc_lock_holders(void *ctx, uint64_t file, uint32_t *pids, uint32_t max)
{
	(void)ctx;
	return lock_holders(file, pids, max, true, NULL);
}

uint32_t diag_front_lock_holders_quick(uint64_t file, uint32_t *pids, uint32_t max,
				     bool *unresolved)
{
	return lock_holders(file, pids, max, false, unresolved);
}

/*
 * The owner of a glibc mutex, from the waiter's process memory.  This is
 * a heuristic: the futex word of a wait is just an address, and nothing
 * says it belongs to a pthread_mutex_t.  glibc's layout (x86_64,
 * struct __pthread_mutex_s) puts the futex word `__lock` at offset 0 and
 * `__owner`, the tid of the thread that holds it, at offset 8; glibc sets
 * __owner on every lock of a normal, recursive, error-checking or robust
 * mutex and clears it on unlock.  A condition variable, a semaphore, a
 * bare futex or another library's lock has something else there, so the
 * answer is believed only when it is consistent: the futex word is
 * nonzero (locked) and the owner is a live thread of the same process
 * (/proc/PID/task/OWNER exists).  Stale or foreign bytes can still pass:
 * the caller should also check the owner is not the waiting thread itself.
 * A mutex shared between processes (PTHREAD_PROCESS_SHARED) has an owner
 * in another process: that reads as -ENOENT.
 */
/* len bytes of process pid's memory at uaddr: 0, -EFAULT unmapped (or
 * short), -errno when /proc/PID/mem cannot be read. */
static int read_mem(uint32_t pid, uint64_t uaddr, void *buf, size_t len)
{
	char path[64];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, buf, len, (off_t)uaddr);
	if (got < 0) {
		int err = -errno;

		close(fd);
		return err == -EIO ? -EFAULT : err; /* EIO: not mapped */
	}
	close(fd);
	return got == (ssize_t)len ? 0 : -EFAULT;
}

/* Is tid a live thread of process pid? */
static bool thread_of(uint32_t pid, uint32_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	return tid && access(path, F_OK) == 0;
}

int diag_front_mutex_owner(uint32_t pid, uint64_t uaddr, uint32_t *owner_tid)
{
	struct { int32_t lock; uint32_t count; int32_t owner; } m;
	int rc;

	if (!owner_tid || !pid || !uaddr || (uaddr & 3))
		return -EINVAL;
	if ((rc = read_mem(pid, uaddr, &m, sizeof(m))))
		return rc;
	if (!m.lock || m.owner <= 0)
		return -ENOENT;
	/* robust mutexes keep FUTEX_WAITERS/OWNER_DIED bits beside the tid
	 * in __lock, but __owner is the plain tid */
	if (!thread_of(pid, (uint32_t)m.owner))
		return -ENOENT;
	*owner_tid = (uint32_t)m.owner;
	return 0;
}

/*
 * The owner of a PI futex (FUTEX_LOCK_PI: a PTHREAD_PRIO_INHERIT mutex,
 * or a lock built on the PI futex ops directly).  The kernel's protocol
 * puts the owner's tid in the futex word itself (FUTEX_TID_MASK, the low
 * 30 bits), and sets FUTEX_WAITERS (bit 31) once a thread sleeps on it in
 * the kernel -- as the waiter being diagnosed does.  Believed only when
 * both hold and the tid is a live thread of the same process: a plain
 * glibc mutex's word is 0, 1 or 2 (no waiters bit), a condvar's counts
 * do not reach bit 31.  A glibc PI mutex keeps __owner too, so
 * diag_front_mutex_owner answers it first.  A PI futex shared with another
 * process has its owner there: -ENOENT.
 */
int diag_front_pi_owner(uint32_t pid, uint64_t uaddr, uint32_t *owner_tid)
{
	uint32_t word, tid;
	int rc;

	if (!owner_tid || !pid || !uaddr || (uaddr & 3))
		return -EINVAL;
	if ((rc = read_mem(pid, uaddr, &word, sizeof(word))))
		return rc;
	tid = word & 0x3fffffffu;               /* FUTEX_TID_MASK */
	if (!(word & 0x80000000u) || !thread_of(pid, tid))      /* FUTEX_WAITERS */
		return -ENOENT;
	*owner_tid = tid;
	return 0;
}
