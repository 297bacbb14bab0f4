#!/bin/bash
# e2e (security, issue 25 F1): root's `argus instrument --via uprobe` on a
# user's process puts its probe on the very file the process maps, never
# on a file the user names.  As nobody (tests/e2e/sec/steer.c): dlopen
# libevil.so, whose "handler" sits at the file offset of memfrob's
# `xorb $0x2a` immediate in libc, delete it, and plant a symlink
# "libevil.so (deleted)" -> libc beside it, so that the maps text of the
# mapping names libc.  Root then instruments libevil:handler --via uprobe.
# Before the fix the kernel, resolving that text as root, put the int3 into
# libc: every process's memfrob went wrong until --remove.
# Asserts:
#   - the instrument ends (within 20 s) and either refuses or probes the
#     real, deleted libevil.so: then the int3 is in the attacker's
#     handler, and its pin is there;
#   - libc is untouched: a fresh root process has libc's own bytes around
#     memfrob's xor, and memfrob("AAAA") is "kkkk" in a root process;
#   - --remove finds the pinned probe and takes it out (handler's bytes
#     are the file's again);
#   - the same from the user's own mount namespace (unshare -Urm, when the
#     kernel lets nobody do that): a tmpfs there holds libevil.so, and the
#     same path in ours is a symlink to libc.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
[ -r /sys/bus/event_source/devices/uprobe/type ] || fail "this kernel has no uprobe PMU"
command -v readelf >/dev/null || fail "readelf (binutils) is needed"
sec_init
sec_build steer
LIBC=$(awk '$6 ~ /\/libc\.so\.6$/ { print $6; exit }' /proc/self/maps)
[ -n "$LIBC" ] || fail "cannot find libc.so.6 in our maps"

# memfrob's file offset, and its `xorb $0x2a,-1(%rdx)` (80 72 ff 2a) in
# the first 64 bytes: the probe goes on its immediate
read -r FROB TARGET < <(/usr/bin/python3 - "$LIBC" <<'PY'
import struct, subprocess, sys
lib = sys.argv[1]
v = [int(l.split()[1], 16) for l in subprocess.run(["readelf", "-sW", "--dyn-syms", lib],
     capture_output=True, text=True).stdout.splitlines()
     if len(l.split()) >= 8 and l.split()[7].startswith("memfrob@@")][0]
d = open(lib, "rb").read()
phoff, = struct.unpack_from("<Q", d, 0x20)
phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
for i in range(phnum):
    t, _, o, a, _, fs = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
    if t == 1 and a <= v < a + fs:
        off = v - a + o
k = d.find(b"\x80\x72\xff\x2a", off, off + 64)
print(off, k + 3 if k >= 0 else off)
PY
)
[ -n "$TARGET" ] || fail "cannot find memfrob in $LIBC"
log "libc $LIBC: memfrob at file offset $(printf %#x "$FROB"), the probe's target $(printf %#x "$TARGET")"
/usr/bin/python3 "$(dirname "$0")/sec/build_evil.py" "$(dirname "$0")/sec/evil.c" "$PUBDIR/libevil.so" \
	"$TARGET" 2>"$T/evil.err" || fail "cannot build libevil.so" "$T/evil.err"

# libc's bytes around the target in a fresh root process, against the file's
libc_clean() {
	local pid rc
	sleep 30 &
	pid=$!
	sleep 0.1
	/usr/bin/python3 - "$pid" "$LIBC" "$TARGET" <<'PY'
import sys
pid, lib, target = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
want = open(lib, "rb").read()[target - 24:target + 8]
for l in open("/proc/%d/maps" % pid):
    f = l.split()
    if len(f) >= 6 and f[5] == lib and int(f[2], 16) <= target - 24:
        s, e = (int(x, 16) for x in f[0].split("-"))
        o = int(f[2], 16)
        if o + (e - s) >= target + 8:
            m = open("/proc/%d/mem" % pid, "rb")
            m.seek(s + target - 24 - o)
            got = m.read(32)
            if got != want:
                sys.exit("libc in a fresh root process: %s, the file: %s" % (got.hex(), want.hex()))
            sys.exit(0)
sys.exit("no mapping of libc covers the target in process %d" % pid)
PY
	rc=$?
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return $rc
}
frob_ok() {
	local out
	out=$(/usr/bin/python3 -c 'import ctypes; b = ctypes.create_string_buffer(b"AAAA", 4); ctypes.CDLL(None).memfrob(b, 4); print(b.raw)')
	[ "$out" = "b'kkkk'" ] || { log "memfrob(\"AAAA\") in a root process: $out"; return 1; }
}
libc_clean 2>"$T/clean0" || fail "libc differs from its file before the attack" "$T/clean0"
frob_ok || fail "memfrob is wrong before the attack"

sec_start --no-watch-interactive
PINS=()
trap 'rc=$?; for p in "${PINS[@]}"; do rm -f /sys/fs/bpf/argus-live/"$p"-*; done; (exit $rc); sec_cleanup' EXIT

# attack ATTACKER_CMD...: run it as nobody, instrument its handler as root,
# check libc and the probe, remove it
attack() {
	local name=$1 out pid haddr rc now
	shift
	out=$T/$name.out
	"$@" >"$out" 2>"$T/$name.err" &
	E2E_PIDS+=($!)
	for _ in $(seq 100); do grep -q '^pid ' "$out" && break; sleep 0.05; done
	grep -q '^pid ' "$out" || fail "$name: the attacker did not start" "$T/$name.err"
	read -r _ pid _ haddr <"$out"
	PINS+=("$pid")
	E2E_PIDS+=("$pid")	# $! is as_nobody's subshell; this is the attacker
	now=$(grep -m1 -o '/[^ ]*libevil\.so.*' /proc/"$pid"/maps)
	log "$name: pid $pid: its maps say '$now', which names $(readlink -f "$now") here"
	timeout 20 "$ARGUS" instrument --pid "$pid" --func libevil:handler --as begin --via uprobe \
		>"$T/$name.i.out" 2>"$T/$name.i.err"
	rc=$?
	[ $rc -lt 124 ] || fail "$name: instrument did not finish (exit $rc)" "$T/$name.i.err"
	log "$name: instrument exit $rc: $(cat "$T/$name.i.out" "$T/$name.i.err")"
	libc_clean 2>"$T/$name.clean" || fail "$name: root's uprobe landed in libc" "$T/$name.clean"
	frob_ok || fail "$name: memfrob is wrong in a root process: the probe is in libc"
	if [ $rc = 0 ]; then
		ls /sys/fs/bpf/argus-live/ | has "^$pid-${haddr#0x}-" ||
			fail "$name: instrument succeeded, but no probe of $pid at $haddr is pinned"
		now=$(/usr/bin/python3 -c "f = open('/proc/$pid/mem', 'rb'); f.seek($haddr); print(f.read(9).hex())")
		[ "$now" = cc90909090909090c3 ] ||
			fail "$name: the probe is not on the libevil.so the process maps (handler is $now)"
		log "$name: the probe is on the libevil.so the process maps (handler: $now); libc is clean"
		"$ARGUS" instrument --pid "$pid" --func libevil:handler --remove --via uprobe \
			>"$T/$name.r.out" 2>"$T/$name.r.err" || fail "$name: --remove failed" "$T/$name.r.err"
		ls /sys/fs/bpf/argus-live/ 2>/dev/null | has "^$pid-" && fail "$name: still pinned after --remove"
		for _ in $(seq 40); do
			now=$(/usr/bin/python3 -c "f = open('/proc/$pid/mem', 'rb'); f.seek($haddr); print(f.read(9).hex())")
			[ "$now" = 9090909090909090c3 ] && break
			sleep 0.05
		done
		[ "$now" = 9090909090909090c3 ] || fail "$name: 2 s after --remove handler is $now"
	else
		grep -q '^argus instrument: ' "$T/$name.i.err" || fail "$name: refused without a clear error" "$T/$name.i.err"
		ls /sys/fs/bpf/argus-live/ 2>/dev/null | has "^$pid-" && fail "$name: refused, but a probe is pinned"
	fi
	kill "$pid" 2>/dev/null
}

mkdir "$ATT/up"
cp "$PUBDIR/libevil.so" "$ATT/up/"
chown -R 65534:65534 "$ATT/up"
attack steer as_nobody "$PUBDIR/steer" "$ATT/up" "$LIBC"

# the same from the user's own mount namespace: there a tmpfs holds the
# real libevil.so; in ours the same path is a symlink to libc (maps paths
# are the namespace's, and the text was resolved in ours)
if as_nobody unshare -Urm true 2>/dev/null; then
	mkdir -p "$ATT/ns/dir"
	cp "$PUBDIR/libevil.so" "$ATT/ns/"
	ln -s "$LIBC" "$ATT/ns/dir/libevil.so"
	cat >"$ATT/ns/run.sh" <<SH
mount -t tmpfs none "$ATT/ns/dir" || exit 1
cp "$ATT/ns/libevil.so" "$ATT/ns/dir/" || exit 1
exec "$PUBDIR/steer" "$ATT/ns/dir" -
SH
	chown -R 65534:65534 "$ATT/ns"
	chown -h 65534:65534 "$ATT/ns/dir/libevil.so"
	attack mntns as_nobody unshare -Urm sh "$ATT/ns/run.sh"
else
	log "unprivileged user namespaces are off here: the mount-namespace variant is skipped"
fi
pass "--via uprobe probes the mapped file itself (deleted or not), never the file its maps text names"
