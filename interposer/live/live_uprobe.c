/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * live_uprobe.c - `argus instrument --via uprobe`: the same entries
 * recorded by the kernel; argus writes nothing into the process (the
 * kernel puts its own int3 at the entry, in the process's copy of the
 * page, and takes it out with the probe).
 *
 * One uprobe perf event (perf_event_open, the "uprobe" PMU whose type is
 * in /sys/bus/event_source/devices/uprobe/type; config1 = a path to the
 * file, config2 = the file offset of the entry; pid -1, cpu 0), linked
 * (BPF_LINK_CREATE) to on_live_hit (live_uprobe.bpf.c) with the cookie
 * (tgid << 8) | kind.  Kernel quirk: the BPF programs of a uprobe event
 * live in one array per probe, run on every hit whatever the perf
 * event's cpu, so one event per CPU (as a counting perf event would be
 * opened) runs the program once per CPU per hit: one event, on cpu 0.  The program writes into argusd's own ring: its
 * `rb` map is found among argusd's fds (/proc/ARGUSD/fdinfo: a ringbuf
 * map named "rb") and handed to libbpf with bpf_map__reuse_fd before the
 * load.  The link is pinned in /sys/fs/bpf/argus-live/ as
 * PID-FUNC-KIND-cpu0, so the probe outlives this command; --remove
 * unlinks the pins, and the kernel drops the probe with the last one.
 *
 * Which file: the probe is root's, on a file, in every process that maps
 * it, so it must land on the very file the process maps at the address
 * and nowhere else.  The path in the process's maps is a name the process
 * controls (a deleted library's "PATH (deleted)" can be a symlink it
 * planted to libc; in its own mount namespace any path names anything),
 * and the kernel resolves config1 as root (kern_path, LOOKUP_FOLLOW).  So
 * config1 is never that text: the mapping's file is opened through
 * /proc/PID/map_files/START-END (live_open_mapped: a regular file with the
 * maps line's dev and inode, deleted or not) and config1 is
 * /proc/self/fd/N of that fd, a magic link that resolves to the exact file
 * object.  Before the attach: the mapping holding the address must be of
 * the file the symbol was read from (dev, inode), and the entry's bytes
 * read through that fd at the probe's offset must be the bytes the process
 * has at the address (the first may be another probe's int3).
 *
 * Limits: the probe is on the file, so every process mapping it traps
 * (the others' hits are dropped by the program, but they pay the trap);
 * the pins outlive the instrumented process (and an argusd restart: the
 * old ring then has no reader) until --remove.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "argus_events.h"
#include "argus_live.h"
#include "live_internal.h"
#include "live_uprobe.skel.h"

_Static_assert(sizeof(struct ae_live_hit) == 48, "ae_live_hit layout");

#define WHY(...) do { if (why) snprintf(why, ARGUS_LIVE_WHY, __VA_ARGS__); } while (0)
#define PIN_DIR "/sys/fs/bpf/argus-live"
#define BPF_FS_MAGIC_ 0xcafe4a11

/* argusd's ring map, opened: a BPF_MAP_TYPE_RINGBUF named "rb" among the
 * fds of the argusd whose pid is in run_dir/argusd.pid. */
static int argusd_ring(const char *run_dir, char *why)
{
	char p[512], line[256];
	struct dirent *d;
	DIR *dir;
	FILE *f;
	int apid = 0, fd = -1;

	snprintf(p, sizeof(p), "%s/argusd.pid", run_dir);
	f = fopen(p, "re");
	if (!f || fscanf(f, "%d", &apid) != 1 || apid <= 0) {
		if (f)
			fclose(f);
		WHY("no collector in %s (argus start first): the uprobe records go into its ring", run_dir);
		return -ENOENT;
	}
	fclose(f);
	snprintf(p, sizeof(p), "/proc/%d/fdinfo", apid);
	dir = opendir(p);
	if (!dir) {
		WHY("the collector (pid %d) of %s is not running", apid, run_dir);
		return -ESRCH;
	}
	while (fd < 0 && (d = readdir(dir))) {
		unsigned type = 0, id = 0;

		if (d->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/%d/fdinfo/%s", apid, d->d_name);
		f = fopen(p, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			sscanf(line, "map_type: %u", &type);
			sscanf(line, "map_id: %u", &id);
		}
		fclose(f);
		if (type == BPF_MAP_TYPE_RINGBUF && id) {
			struct bpf_map_info info = { 0 };
			__u32 len = sizeof(info);
			int m = bpf_map_get_fd_by_id(id);

			if (m >= 0 && !bpf_obj_get_info_by_fd(m, &info, &len) && !strcmp(info.name, "rb"))
				fd = m;
			else if (m >= 0)
				close(m);
		}
	}
	closedir(dir);
	if (fd < 0)
		WHY("the collector (pid %d) has no BPF ring named rb", apid);
	return fd < 0 ? -ENOENT : fd;
}

static int pin_dir(char *why)
{
	struct statfs sf;

	if (statfs("/sys/fs/bpf", &sf) || sf.f_type != BPF_FS_MAGIC_) {
		/* like tracefs (BRIEF §5), not mounted at boot on every machine */
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL)) {
			WHY("/sys/fs/bpf is not a bpf filesystem and mounting one failed: %s",
			    strerror(errno));
			return -errno;
		}
	}
	if (mkdir(PIN_DIR, 0700) && errno != EEXIST) {
		WHY("mkdir %s: %s", PIN_DIR, strerror(errno));
		return -errno;
	}
	return 0;
}

static void pin_name(char *out, size_t len, pid_t pid, uint64_t func, int kind, int cpu)
{
	snprintf(out, len, PIN_DIR "/%d-%llx-%d-cpu%d", (int)pid, (unsigned long long)func, kind,
		 cpu);
}

int argus_live__uprobe_remove(pid_t pid, uint64_t func, char *why)
{
	char pre[64], p[512];
	struct dirent *d;
	DIR *dir = opendir(PIN_DIR);
	int n = 0;

	snprintf(pre, sizeof(pre), "%d-%llx-", (int)pid, (unsigned long long)func);
	while (dir && (d = readdir(dir)))
		if (!strncmp(d->d_name, pre, strlen(pre))) {
			snprintf(p, sizeof(p), PIN_DIR "/%s", d->d_name);
			if (!unlink(p))
				n++;
		}
	if (dir)
		closedir(dir);
	if (!n) {
		WHY("%#llx of process %d has no argus uprobe", (unsigned long long)func, (int)pid);
		return -ENOENT;
	}
	return 0;
}

int argus_live__uprobe_list(pid_t pid, uint64_t *funcs, int *kinds, size_t cap, size_t *n)
{
	struct dirent *d;
	DIR *dir = opendir(PIN_DIR);

	*n = 0;
	while (dir && (d = readdir(dir)) && *n < cap) {
		unsigned long long f;
		int p, k, cpu;

		if (sscanf(d->d_name, "%d-%llx-%d-cpu%d", &p, &f, &k, &cpu) != 4 || p != pid || cpu)
			continue;
		funcs[*n] = f;
		kinds[(*n)++] = k;
	}
	if (dir)
		closedir(dir);
	return 0;
}

/* The bytes at the probe's offset in fd are the process's at addr (byte 0
 * may be an int3: another uprobe, or a debugger's breakpoint, is there). */
static int same_bytes(pid_t pid, int fd, uint64_t addr, uint64_t off, uint64_t mend, char *why)
{
	uint8_t mem[16], file[16];
	size_t k = mend - addr < sizeof(mem) ? (size_t)(mend - addr) : sizeof(mem);
	char p[64];
	ssize_t got;
	int mfd, err = 0;

	snprintf(p, sizeof(p), "/proc/%d/mem", (int)pid);
	mfd = open(p, O_RDONLY | O_CLOEXEC);
	if (mfd < 0) {
		err = -errno;
		WHY("cannot read the memory of process %d: %s", (int)pid, strerror(errno));
		return err;
	}
	got = pread(mfd, mem, k, (off_t)addr);
	close(mfd);
	if (got != (ssize_t)k) {
		WHY("cannot read %#llx in process %d", (unsigned long long)addr, (int)pid);
		return -EFAULT;
	}
	got = pread(fd, file, k, (off_t)off);
	if (got != (ssize_t)k || (mem[0] != file[0] && mem[0] != 0xcc) ||
	    memcmp(mem + 1, file + 1, k - 1)) {
		WHY("the file mapped at %#llx does not hold, at offset %#llx, the bytes the process"
		    " runs there: refused (a uprobe would go on the file, not the process)",
		    (unsigned long long)addr, (unsigned long long)off);
		return -ESTALE;
	}
	return 0;
}

int argus_live__uprobe_add(pid_t pid, const struct argus_live_sym *fn, enum argus_live_kind kind,
			   const char *run_dir, char *why)
{
	struct live_uprobe_bpf *skel = NULL;
	struct argus_live_map *maps = NULL, m = { 0 };
	struct perf_event_attr pa = { .size = sizeof(pa) };
	char path[64], pin[256];
	uint64_t off = 0;
	size_t n;
	int type = -1, ring = -1, ncpu, err, made = 0, fd = -1;
	bool found = false;
	FILE *tf;

	err = argus_live__maps(pid, &maps, &n);
	if (err) {
		WHY("no process %d", (int)pid);
		return err;
	}
	for (size_t i = 0; i < n && !found; i++)
		if (fn->addr >= maps[i].start && fn->addr < maps[i].end) {
			m = maps[i];
			found = true;
		}
	free(maps);
	if (!found || m.path[0] != '/' || !m.ino) {
		WHY("%#llx is not in a mapped file: a uprobe needs file + offset",
		    (unsigned long long)fn->addr);
		return -EINVAL;
	}
	if (!fn->ino || m.dev != fn->dev || m.ino != fn->ino) {
		WHY("%#llx is in %s (inode %llu), not in the file the function was read from"
		    " (inode %llu): refused (a uprobe goes on a file, in every process that maps it)",
		    (unsigned long long)fn->addr, m.path, (unsigned long long)m.ino,
		    (unsigned long long)fn->ino);
		return -EINVAL;
	}
	off = fn->addr - m.start + m.off;
	fd = live_open_mapped(pid, &m, NULL);
	if (fd < 0) {
		WHY("cannot open %s through its mapping (/proc/%d/map_files): %s", m.path, (int)pid,
		    strerror(-fd));
		return fd;
	}
	err = same_bytes(pid, fd, fn->addr, off, m.end, why);
	if (err)
		goto out;
	/* the kernel resolves config1 as root: our fd's magic link, the
	 * exact file checked above, never a name the process controls */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	tf = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	if (!tf || fscanf(tf, "%d", &type) != 1) {
		WHY("this kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe/type)");
		if (tf)
			fclose(tf);
		err = -ENOSYS;
		goto out;
	}
	fclose(tf);
	ring = argusd_ring(run_dir, why);
	if (ring < 0) {
		err = ring;
		goto out;
	}
	err = pin_dir(why);
	if (err)
		goto out;
	skel = live_uprobe_bpf__open();
	if (!skel) {
		err = -errno;
		WHY("cannot open the uprobe BPF program: %s", strerror(errno));
		goto out;
	}
	err = bpf_map__reuse_fd(skel->maps.rb, ring);
	if (!err)
		err = live_uprobe_bpf__load(skel);
	if (err) {
		WHY("cannot load the uprobe BPF program: %s", strerror(-err));
		goto out;
	}
	pa.type = (uint32_t)type;
	pa.config1 = (uint64_t)(uintptr_t)path;	/* uprobe_path */
	pa.config2 = off;			/* probe_offset */
	ncpu = 1;	/* see the top: one event runs the program on every CPU */
	for (int cpu = 0; cpu < ncpu; cpu++) {
		LIBBPF_OPTS(bpf_link_create_opts, lo);
		int pfd, lfd;

		pfd = (int)syscall(SYS_perf_event_open, &pa, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (pfd < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue;	/* a possible CPU that is not online */
			err = -errno;
			WHY("perf_event_open(uprobe %s+%#llx, cpu %d): %s", m.path,
			    (unsigned long long)off, cpu, strerror(errno));
			goto out;
		}
		lo.perf_event.bpf_cookie = (uint64_t)pid << 8 | (uint64_t)kind;
		lfd = bpf_link_create(bpf_program__fd(skel->progs.on_live_hit), pfd, BPF_PERF_EVENT, &lo);
		if (lfd < 0) {
			err = -errno;
			WHY("attaching the uprobe program (cpu %d): %s", cpu, strerror(errno));
			close(pfd);
			goto out;
		}
		pin_name(pin, sizeof(pin), pid, fn->addr, kind, cpu);
		err = bpf_obj_pin(lfd, pin) ? -errno : 0;
		close(lfd);
		close(pfd);
		if (err) {
			WHY("pinning %s: %s", pin, strerror(-err));
			goto out;
		}
		made++;
	}
	if (!made) {
		WHY("no CPU took the uprobe");
		err = -ENODEV;
	}
out:
	if (err && made)
		argus_live__uprobe_remove(pid, fn->addr, NULL);
	live_uprobe_bpf__destroy(skel);
	if (ring >= 0)
		close(ring);
	if (fd >= 0)
		close(fd);
	return err;
}
