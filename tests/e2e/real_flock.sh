#!/bin/bash
# e2e (real programs): util-linux flock(1) waiting on a file lock.
#
#   flock L sleep HOLD &     holds an exclusive flock on L (flock(1) takes
#                            the lock, then forks sleep and waits for it)
#   flock L true             blocks in flock(2) until the holder exits
#
# Ground truth, read by the harness while the second flock waits:
# /proc/locks, whose FLOCK line on L's inode names the holder's pid and
# whose `->` line names the waiter; the holder's child (the sleep it waits
# for) from /proc/PID/task/PID/children.  Expected: the victim (the
# waiting flock) is blamed on the holder flock, whose own culprit is its
# sleep child.  See real_lib.sh for the phases (record, hangs, keeper, lldb).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/real_lib.sh"
command -v flock >/dev/null || fail "no flock (util-linux)"

cat >"$T/harness.sh" <<'SH'
set -u
hold=$1 g=$2
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }
L=$g.lock
: >"$L"
ino=$(stat -c %i "$L")
flock "$L" sleep "$hold" &
H=$!
echo "$H" >>"$g.pids"
# the holder has the lock once /proc/locks shows a FLOCK on L's inode
end=$((SECONDS + 10))
until grep -qE "^[0-9]+: FLOCK +ADVISORY +WRITE +[0-9]+ [0-9a-f]+:[0-9a-f]+:$ino " /proc/locks; do
	[ $SECONDS -lt $end ] || { echo "harness: the holder never took the lock" >&2; exit 1; }
	sleep 0.02
done
holder=$(grep -E "^[0-9]+: FLOCK +ADVISORY +WRITE +[0-9]+ [0-9a-f]+:[0-9a-f]+:$ino " /proc/locks | awk '{print $5}')
child=$(cat "/proc/$holder/task/$holder/children" 2>/dev/null | awk '{print $1}')
flock "$L" true &
V=$!
echo "$V" >>"$g.pids"
until grep -qE "^[0-9]+: -> FLOCK +ADVISORY +WRITE +$V [0-9a-f]+:[0-9a-f]+:$ino " /proc/locks; do
	[ $SECONDS -lt $end ] || { echo "harness: the second flock never waited" >&2; exit 1; }
	sleep 0.02
done
{
	echo "VICTIM_PID=$V"
	echo "CULPRIT_PID=$holder"
	echo "CULPRIT_COMM=flock"
	echo "CHAIN=$child"
	echo "HOLDER_CHILD=$child ($(cat /proc/$child/comm 2>/dev/null))"
	echo "PROC_LOCKS=$(grep -E ":$ino " /proc/locks | tr -s ' ' | paste -sd '|')"
	echo "IN_WAIT_NS=$(mono)"
	echo "READY=1"
} >>"$g"
wait "$V" || { echo "harness: the waiting flock failed" >&2; exit 1; }
echo "DONE_NS=$(mono)" >>"$g"
wait "$H"
SH

real_run_harness flock 3.5
real_check_diagnose "$TRACE" "$GT"
real_check_report "$TRACE" "$GT"
real_check_hangs "$TRACE" "$GT"
real_keeper 6 flock
# the holder's sleep starts just before the victim waits: hold 8.5 s for a
# live hang of 8 s (real_lib.sh: real_live)
real_live 8.5 3
real_live 8.5 random
real_finish "flock: the waiter is blamed on the /proc/locks holder, in the trace and live in lldb"
