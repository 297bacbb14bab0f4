#!/bin/bash
# e2e (real): the data-flag workflow on code nobody here wrote: libgomp,
# GCC's OpenMP runtime (Debian's libgomp1).  tests/apps/omp_barrier.c only
# drives it: two OpenMP threads, the master slow (3 s of sleeps) before a
# barrier.  With OMP_WAIT_POLICY=active the worker waits at the barrier in
# libgomp's own spin loop (no syscall: a pure busy spin) on a word of the
# team's barrier in heap memory, which the master bumps when it arrives.
#   1. a private collector runs; while the worker spins, `argus flag --pid
#      P --tid WORKER --watch` steps it: the flag is in [heap], read by an
#      instruction inside libgomp.so, value 0 then; the watch is armed
#      with the worker as its reader;
#   2. after the app: `argus save`; the saved trace holds a write of the
#      flag by the master thread (MASTER_TID), at or after the master's own
#      ARRIVE_NS reading and before DONE_NS, naming the worker as reader;
#   3. `argus diagnose --pid P --tid WORKER --json`: the worker's busy hang
#      (it spun ~3 s) is blamed on the master by the dataflag rule.
# Ground truth: the app's own printout of gettid() and CLOCK_MONOTONIC.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/step_lib.sh"
e2e_init "$@"
need_hw_watchpoints   # the writes are recorded by hardware watchpoints
APP=$APPS/omp_barrier
[ -x "$APP" ] || fail "no $APP (the build needs OpenMP: gcc's libgomp)"
ldd "$APP" | has 'libgomp\.so' || fail "$APP does not use libgomp" 
OUT=$T/app.out

start_collector --dir "$T/ring" --size 256M --no-watch-interactive
OMP_WAIT_POLICY=active "$APP" 3000 >"$OUT" 2>"$T/app.err" &
P=$!
E2E_PIDS+=("$P")
for _ in $(seq 100); do grep -q '^WORKER_TID=' "$OUT" 2>/dev/null && break; sleep 0.05; done
W=$(kv WORKER_TID)
[ -n "$W" ] || fail "the app printed no WORKER_TID" "$OUT"
wait_spinning "$P" "$W"
timeout -k 5 30 "$ARGUS" flag --pid "$P" --tid "$W" --json --watch >"$T/flag.json" 2>"$T/flag.err" ||
	fail "argus flag --pid $P --tid $W --watch failed" "$T/flag.err"
ADDR=$(jget "$T/flag.json" 'j["flag"]["addr"]')
MAP=$(jget "$T/flag.json" 'j["flag"]["mapping"]')
WHERE=$(jget "$T/flag.json" 'j["flag"]["insn"]["where"]')
log "argus flag: $(printf '0x%x' "$ADDR") ($MAP), read at $WHERE, value $(jget "$T/flag.json" 'j["flag"]["value"]'); $(grep '^argus: watch' "$T/flag.err")"
[ "$MAP" = "[heap]" ] || fail "the flag is not in the heap ($MAP)" "$T/flag.json"
case $WHERE in libgomp.so*) ;; *) fail "the flag is not read by libgomp's code ($WHERE)" "$T/flag.json" ;; esac
grep -q "^argus: watch [0-9]* armed: process $P, .*; reader thread $W\$" "$T/flag.err" ||
	fail "--watch did not arm the watch with the worker as reader" "$T/flag.err"
wait "$P" || fail "omp_barrier failed" "$T/app.err"
M=$(kv MASTER_TID)
ARRIVE=$(kv ARRIVE_NS)
DONE=$(kv DONE_NS)

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
dump_to "$T/s.argus" "$T/s.dump"
grep -E ": hwwatch .* reader=$W\$" "$T/s.dump" >"$T/writes.txt" || true
[ -s "$T/writes.txt" ] || fail "no watched write names the worker $W as reader" "$T/s.dump"
"$PY" - "$T/writes.txt" "$M" "$ARRIVE" "$DONE" <<'PY' || fail "no write of the flag by the master $M between ARRIVE_NS and DONE_NS" "$T/writes.txt"
import re, sys
master, arrive, done = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ok = False
# "  omp_barrier   27380/27380   [001] 16723.142123089: hwwatch ..."
for line in open(sys.argv[1]):
    m = re.match(r"\s*\S+\s+(\d+)/(\d+)\s+\[\d+\]\s+(\d+)\.(\d{9}):\s+hwwatch", line)
    if m and int(m.group(1)) == master and arrive <= int(m.group(3)) * 10**9 + int(m.group(4)) <= done:
        ok = True
sys.exit(0 if ok else 1)
PY
log "$(wc -l <"$T/writes.txt") watched write(s), the master's: $(grep -c " $M/$P " "$T/writes.txt" || true)"

"$ARGUS" diagnose "$T/s.argus" --pid "$P" --tid "$W" --json >"$T/d.json" 2>"$T/d.err" ||
	fail "argus diagnose --pid $P --tid $W failed" "$T/d.err"
"$ARGUS" diagnose "$T/s.argus" --pid "$P" --tid "$W" >"$T/d.txt" 2>&1 || true
[ "$(jget "$T/d.json" 'j["hang"]["tid"]')" = "$W" ] || fail "the hang found is not the worker's" "$T/d.txt"
[ "$(jget "$T/d.json" 'j["hang"]["kind"]')" = busy ] || fail "the worker's hang is not busy (a pure spin)" "$T/d.txt"
[ "$(jget "$T/d.json" 'j["culprit"]["tid"]')" = "$M" ] || fail "the culprit is not the master thread $M" "$T/d.txt" 60
[ "$(jget "$T/d.json" 'j["culprit"]["rule"]')" = dataflag ] || fail "the culprit's rule is not dataflag" "$T/d.txt" 60
pass "libgomp's barrier spin: argus flag found the heap word libgomp spins on, the watch saw the master $M write it after it arrived, and the worker's busy hang is blamed on the master (dataflag)"
