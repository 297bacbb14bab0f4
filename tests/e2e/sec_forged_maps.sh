#!/bin/bash
# e2e (security, issue 25 F3): a line of a user's /proc/PID/maps cannot
# forge a mapping for root's `argus inject` / `argus instrument`, and no
# file they open can be a FIFO.  As nobody (tests/e2e/sec/forgemaps.c): a
# file whose 1,100-byte path ends in "10000-11000 r-xp 00000000 00:00 0
# DIR/fifo/libc.so.6", mapped, so that a reader of maps with
# fgets(line, 1024) sees a second mapping, of a FIFO named libc.so.6,
# whose map_files entry does not exist.  Before the fix argus fell back to
# open(path) as root, without O_NONBLOCK, and blocked for ever.
# Asserts, for inject, instrument --count-only of libc.so.6:getpid (and
# its --remove), instrument --via uprobe and step's symbol reading (flag):
#   - each finishes within 20 s (no open of the FIFO blocks it);
#   - the FIFO has had no reader (a writer's O_NONBLOCK open gets ENXIO);
#   - the forged line is ignored: inject loads the interposer through the
#     real libc's dlopen, instrument patches the real libc's getpid.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
sec_build forgemaps
sec_start --no-watch-interactive

mkdir "$ATT/inj"
chown 65534:65534 "$ATT/inj"
as_nobody "$PUBDIR/forgemaps" "$ATT/inj" >"$T/fm.out" 2>"$T/fm.err" &
E2E_PIDS+=($!)
for _ in $(seq 100); do grep -q '^pid ' "$T/fm.out" && break; sleep 0.05; done
grep -q '^pid ' "$T/fm.out" || fail "forgemaps did not start" "$T/fm.err"
read -r _ PID _ <"$T/fm.out"
E2E_PIDS+=("$PID")	# $! is as_nobody's subshell; this is the attacker
FIFO=$ATT/inj/fifo/libc.so.6
[ -p "$FIFO" ] || fail "no FIFO at $FIFO"
log "$(cat "$T/fm.out")"
# what a 1,024-byte fgets sees: the forged line is there
/usr/bin/python3 - "$PID" "$FIFO" <<'PY' || fail "the maps of $PID do not forge a line for fgets(1024)"
import sys
pid, fifo = sys.argv[1], sys.argv[2]
data = open("/proc/%s/maps" % pid, "rb").read()
lines, cur = [], b""
for b in data:                                   # fgets(line, 1024)
    cur += bytes([b])
    if b == 10 or len(cur) == 1023:
        lines.append(cur); cur = b""
sys.exit(0 if any(l.startswith(b"10000-11000 ") and fifo.encode() in l for l in lines) else 1)
PY

no_reader() {
	/usr/bin/python3 - "$FIFO" <<'PY'
import errno, os, sys
try:
    os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK))
except OSError as e:
    sys.exit(0 if e.errno == errno.ENXIO else 1)
sys.exit("the FIFO has a reader")
PY
}

# run NAME CMD...: as root, within 20 s, and the FIFO unopened after it
run() {
	local name=$1 rc
	shift
	timeout -k 5 20 "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ $rc -lt 124 ] || fail "$name: \`$*\` did not finish within 20 s (exit $rc): blocked on the FIFO?" "$T/$name.err"
	no_reader || fail "$name: the FIFO was opened for reading"
	log "$name: exit $rc: $(cat "$T/$name.out" "$T/$name.err" | head -c 400 | tr '\n' ' ')"
	return $rc
}

run inject "$ARGUS" inject --pid "$PID" || fail "inject failed" "$T/inject.err"
grep -q 'libargus-interpose' /proc/"$PID"/maps || fail "inject did not load the interposer"
run instrument "$ARGUS" instrument --pid "$PID" --func libc.so.6:getpid --as begin --count-only ||
	fail "instrument --count-only libc.so.6:getpid failed" "$T/instrument.err"
ADDR=$(sed -n 's/.* at \(0x[0-9a-f]*\) .*/\1/p' "$T/instrument.out")
LIBC=$(/usr/bin/python3 -c '
import sys
a = int(sys.argv[2], 16)
for l in open("/proc/%s/maps" % sys.argv[1]):
    f = l.split()
    s, e = (int(x, 16) for x in f[0].split("-"))
    if s <= a < e and len(f) >= 6:
        print(f[5])' "$PID" "$ADDR")
case $LIBC in */libc.so.6) ;; *) fail "instrument patched $ADDR in '$LIBC', not the real libc" ;; esac
run remove "$ARGUS" instrument --pid "$PID" --func libc.so.6:getpid --remove ||
	fail "instrument --remove failed" "$T/remove.err"
if [ -r /sys/bus/event_source/devices/uprobe/type ]; then
	trap 'rc=$?; rm -f /sys/fs/bpf/argus-live/"$PID"-*; (exit $rc); sec_cleanup' EXIT
	run uprobe "$ARGUS" instrument --pid "$PID" --func libc.so.6:getpid --as begin --via uprobe ||
		fail "instrument --via uprobe failed" "$T/uprobe.err"
	run uprobe_rm "$ARGUS" instrument --pid "$PID" --func libc.so.6:getpid --remove --via uprobe ||
		fail "instrument --remove --via uprobe failed" "$T/uprobe_rm.err"
fi
# step's symbols read the same maps (argus flag steps a thread and names
# the addresses it reads): it ends, whatever it finds in a thread in pause()
run flag "$ARGUS" flag --pid "$PID" --tid "$PID" || true
kill "$PID"
pass "a forged maps line is one line of a long path: ignored; no FIFO opened, nothing blocked"
