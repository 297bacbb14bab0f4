#!/bin/bash
# e2e: task-context records wait in per-CPU batches before they reach the
# ring (kernel-patch/argus.bpf.c, "batches"; docs/collector.md).  Asserts,
# with the real programs:
#   - a save holds a syscall made before it by a thread that has run only
#     user code since (pinned to the last CPU), at three moments: 10 ms,
#     0.3 s and 2 s into the spin.  On this machine that CPU's kernel
#     threads preempt the spinner every few ms, and their switches flush
#     the batch by age too, so this checks the contract, not which flush
#     kept it (measured: it passes with the collector's flush disabled);
#     tests/unit/test_batch_probe.c isolates the collector's flush;
#   - `argus record` keeps the last syscall of a command that spins until
#     it exits;
#   - under a flood on both CPUs (perf bench sched messaging, or hackbench)
#     no record arrives late (the horizon holds every CPU's stream behind
#     the oldest batched record), nothing is lost, and `argus dump` is in
#     timestamp order.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
require_root
app=$APPS/write_then_spin
ncpu=$(nproc)
cpu=$((ncpu - 1))

# the exit of write(/dev/null, BYTES) of PID in TRACE, as dump prints it
# ("sys_exit       write = BYTES arg0=...")
has_marker() {
	local trace=$1 pid=$2 bytes=$3 out=$4
	"$ARGUS" dump "$trace" --pid "$pid" >"$out" 2>"$out.err" || fail "argus dump $trace failed" "$out.err"
	grep -Eq "sys_exit +write = $bytes( |$)" "$out"
}

start_collector --dir "$T/ring" --size 64M --no-watch-interactive
for delay in 0.01 0.3 2; do
	bytes=$((4000 + ${delay//./}))  # 4001, 4003, 4002
	taskset -c "$cpu" "$app" "$bytes" 4 >"$T/spin.out" 2>&1 &
	spin=$!
	for _ in $(seq 100); do grep -q READY=1 "$T/spin.out" && break; sleep 0.05; done
	grep -q READY=1 "$T/spin.out" || fail "write_then_spin did not start" "$T/spin.out"
	pid=$(sed -n 's/^PID=//p' "$T/spin.out")
	sleep "$delay"
	kill -0 "$spin" 2>/dev/null || fail "write_then_spin ended before the save (it spins 4 s)"
	"$ARGUS" save -o "$T/s$delay.argus" >/dev/null 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
	kill -0 "$spin" 2>/dev/null || fail "write_then_spin ended before the save returned: the check would prove nothing"
	has_marker "$T/s$delay.argus" "$pid" "$bytes" "$T/s$delay.dump" ||
		fail "a save ${delay}s into the spin on cpu $cpu lacks the write exit (write = $bytes) made before it" "$T/s$delay.dump"
	log "save ${delay}s into the spin holds the write exit of pid $pid: $(grep -E "write = $bytes" "$T/s$delay.dump" | head -n 1)"
	wait "$spin"
done
"$ARGUS" stop >/dev/null 2>&1 || fail "argus stop failed"

record last -- taskset -c "$cpu" "$app" 4242 1
pid=$(sed -n 's/^PID=//p' "$OUT")
has_marker "$TRACE" "$pid" 4242 "$T/last.dump" ||
	fail "argus record lost the last syscall (write = 4242) of a command that spun until it exited" "$T/last.dump"
log "argus record kept the write exit of pid $pid before its 1 s spin"

flood_cmd
record flood -- "${FLOOD[@]}"
has -E 'late' "$T/flood.err" && fail "records arrived late under the flood: $(grep late "$T/flood.err")" "$T/flood.err"
line=$(tail -n 1 "$T/flood.err")
lost=$(printf '%s\n' "$line" | sed -nE 's/.*[ ,]([0-9]+) lost.*/\1/p')
[ "$lost" = 0 ] || fail "the flood lost records ($line): with a 16 MiB ring and a 64 MiB spill ring this run should lose none" "$T/flood.err"
"$ARGUS" dump "$TRACE" >"$T/flood.dump" 2>"$T/flood.dump.err" || fail "argus dump of the flood failed" "$T/flood.dump.err"
# field 4 is "SECONDS.NANOS:"; every line must be at or after the one before
bad=$(awk '$4 ~ /^[0-9]+\.[0-9]+:$/ { t = substr($4, 1, length($4) - 1) + 0;
	if (n++ && t < last) { print NR": "$0; exit } last = t }' "$T/flood.dump")
[ -z "$bad" ] || fail "argus dump of the flood goes back in time at line $bad" "$T/flood.dump"
pass "batched records: saves and the end keep a spinning thread's last syscall; flood of $(wc -l <"$T/flood.dump") events, 0 late, 0 lost, in order"
