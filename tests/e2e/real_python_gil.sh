#!/bin/bash
# e2e (real interpreter): a Python asyncio event loop whose main thread
# waits for the GIL, in 5 ms timed futex waits, while another thread of
# the process holds it in one long C call (issue 26: argusd's live hang
# watch missed it, though `argus record` + `argus diagnose` named the
# culprit).  CPython from Debian (/usr/bin/python3, run as "gilloop"
# through a symlink so the process has a name of its own), the program
# written by this test into $T/gil_loop.py:
#
#   main    asyncio.run(): the loop's idle wait is its selector's
#           epoll_wait; a call_later tick every 50 ms logs a line with
#           time.monotonic_ns().  When it wants the GIL back from
#           epoll_wait and another thread has it, CPython's take_gil()
#           waits in pthread_cond_timedwait of 5 ms (futex waits that end
#           by their own timeout), sets the drop request, and waits again
#   holder  threading.Thread "holder" (prctl(PR_SET_NAME, "holder") via
#           ctypes: Python 3.11 gives the kernel no thread names) holds
#           the GIL in one C call that never releases it and never looks
#           at the drop request (CPython drops the GIL only between
#           bytecodes): deque(takewhile(partial(gt, deadline),
#           iter(time.monotonic_ns, None)), maxlen=0), C all the way down,
#           busy on the clock (vDSO, no syscall) until the deadline.
#           First 3 normal rounds, calls of 120 ms each 40 ms apart: each
#           makes one tick wait for the GIL (NORMAL_LATE counts the late
#           ticks) and ends with the holder's GIL hand-over, a futex wake
#           of the main thread.  Then the hold: one call of HOLD s, during
#           which the main thread waits for the GIL in timed futex waits,
#           again and again.  Its first tick after the call is late by the
#           hold: that tick is DONE_NS.  Two more ticks, then exit 0
#
# Ground truth, from the program itself (its pid, the holder's
# threading.get_native_id(), the CLOCK_MONOTONIC ns just before the long
# call (IN_WAIT_NS: from then on the main thread cannot run Python), the
# ns when the call returned (HOLD_END_NS) and the main thread's first tick
# after it (DONE_NS: within 100 ms of HOLD_END_NS, either side: the GIL
# goes to the main thread at the holder's first bytecode after the call,
# which may come before the holder reads the clock), each printed and
# flushed at once) and from the harness (/proc: the main thread in futex
# (202) and the holder running, twice in a row 20 ms apart; the holder's
# comm).  Expected: the main thread's hang is blamed on the holder thread,
# which waits for nobody (it runs): no chain.  See real_lib.sh for the
# phases (record, hangs, argusd's keeper, lldb).
#
# Four choices, and why:
# - the holder's call: first a catastrophic regex backtrack
#   (re.match(r'a*a*c', 'a' * M), quadratic, M calibrated at start-up),
#   but this VM's speed drifts up to 2x within seconds (the hold took
#   from 0.7 to 1.65 times what a calibration a second before foretold),
#   so its length could not be bounded: a live phase could attach after
#   the hang.  A call that spins on the clock is as busy and holds the
#   GIL HOLD s exactly (or until lldb detaches, if that is later).
# - the normal rounds: without them, a diagnosis while the hang goes on
#   (lldb's `argus diagnose`) has no wake-up yet and no earlier run of the
#   GIL wait to compare with: "no culprit found: no normal run of this
#   wait to compare with, and no other thread woke it" (seen in this
#   test's first version, attached 3 s in).  Real apps contend for the
#   GIL before the call that hangs them; so does this one.
# - the tick is 50 ms (not 100) and nothing slow comes before the hold:
#   `argus hangs` without --pid wants the victim's hang among the 5
#   longest of the whole machine, and a thread that sleeps through the
#   recording from its first record on (this machine has several) makes a
#   "hang" as long as the trace from there: whatever the program does
#   before the hold lengthens theirs and not the victim's (with a second
#   of calibration and 5 rounds of 100 ms, the victim came 9th of 10).
# - the live phases ask only the plain `argus diagnose --json`, not
#   `--until-end`: lldb stops every thread of the process, the holder too,
#   so the GIL's futex word cannot change and the hang cannot end while
#   lldb holds the process (docs/diagnosis.md, "Waiting for the end": a
#   wait for another thread of the same process never ends while a
#   debugger holds them); each --until-end=40 would only wait out its 40 s
#   and answer ended=false.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/real_lib.sh"
PY=/usr/bin/python3
[ -x $PY ] || fail "needs $PY (Debian's python3)"
COMM=gilloop
# the comm of a process is the name it was exec'd by
ln -s $PY "$T/$COMM"

cat >"$T/gil_loop.py" <<'PY'
import asyncio, ctypes, os, sys, threading, time
from collections import deque
from functools import partial
from itertools import takewhile
from operator import gt

HOLD = float(sys.argv[1])      # seconds the holder keeps the GIL
SHORT = 0.12                   # a normal round's call (s)
ROUNDS = 3                     # normal rounds before the hold
TICK = 0.05                    # the loop's period (s)

def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()

def spin(seconds):
    # one C call (deque's constructor) that reads the clock until the
    # deadline: deque -> takewhile -> partial(gt) and iter(monotonic_ns),
    # all C, no bytecode in between, so no GIL drop (CPython drops it only
    # between bytecodes) and nothing that releases it (clock_gettime
    # through the vDSO: no syscall either)
    deadline = time.monotonic_ns() + int(seconds * 1e9)
    deque(takewhile(partial(gt, deadline), iter(time.monotonic_ns, None)), maxlen=0)

say(f"PID={os.getpid()}")
say(f"MAIN_TID={threading.get_native_id()}")

st = {"started": False, "done": False}

def holder():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(15, b"holder", 0, 0, 0) != 0:   # PR_SET_NAME
        say(f"PRCTL_ERRNO={ctypes.get_errno()}")
    say(f"HOLDER_TID={threading.get_native_id()}")
    # normal rounds: short calls that the loop's next tick waits for
    for i in range(ROUNDS):
        time.sleep(0.04)
        spin(SHORT)
    say(f"NORMAL_ROUNDS={ROUNDS}")
    time.sleep(0.06)
    st["started"] = True
    t0 = time.monotonic_ns()
    say(f"IN_WAIT_NS={t0}")
    spin(HOLD)                  # the hold
    t1 = time.monotonic_ns()
    say(f"HOLD_END_NS={t1}")
    say(f"CALL_NS={t1 - t0}")

async def main():
    loop = asyncio.get_running_loop()
    n, late, prev = 0, 0, time.monotonic_ns()
    fin = loop.create_future()
    def tick():
        nonlocal n, late, prev
        now = time.monotonic_ns()
        gap, prev = now - prev, now
        n += 1
        say(f"TICK={n} {now} gap_ms={gap // 1000000}")
        if not st["started"] and gap > (TICK + 0.03) * 1e9:
            late += 1      # a normal round: the tick waited for the GIL
            say(f"NORMAL_LATE={late}")
        # the first tick late by a second or more once the holder began:
        # the main thread ran Python again
        if st["started"] and not st["done"] and gap > 1000000000:
            st["done"] = True
            say(f"DONE_NS={now}")
            say(f"DONE_GAP_MS={gap // 1000000}")
            loop.call_later(0.1, fin.set_result, None)
        loop.call_later(TICK, tick)
    loop.call_later(TICK, tick)
    await fin

th = threading.Thread(target=holder, name="holder")
th.start()
asyncio.run(main())
th.join()
say("EXIT=0")
PY

{
	printf 'EXE=%q\n' "$T/$COMM"
	printf 'PROG=%q\n' "$T/gil_loop.py"
	cat <<'SH'
set -u
hold=$1 g=$2
out=$g.app
"$EXE" "$PROG" "$hold" >"$out" 2>"$g.app.err" &
V=$!
echo "$V" >>"$g.pids"
app() { sed -n "s/^$1=//p" "$out" | head -n 1; }
end=$((SECONDS + 15))
# the program says the holder began its call; /proc shows the main thread
# in futex (202: the GIL) and the holder running, twice in a row (not
# between two timed waits)
n=0
while [ $n -lt 2 ]; do
	H=$(app HOLDER_TID)
	if [ -n "$(app IN_WAIT_NS)" ] && [ -n "$H" ] &&
		[ "$(cut -d' ' -f1 /proc/$V/task/$V/syscall 2>/dev/null)" = 202 ] &&
		[ "$(cut -d' ' -f1 /proc/$V/task/$H/syscall 2>/dev/null)" = running ]; then
		n=$((n + 1))
	else
		n=0
	fi
	kill -0 "$V" 2>/dev/null || { echo "harness: the program ended before the hang: $(cat "$g.app.err")" >&2; exit 1; }
	[ $SECONDS -lt $end ] || { echo "harness: the main thread never waited for the GIL" >&2; exit 1; }
	sleep 0.02
done
[ "$(app PID)" = "$V" ] || { echo "harness: the program says it is $(app PID), not $V" >&2; exit 1; }
[ "$(app MAIN_TID)" = "$V" ] || { echo "harness: the loop runs in $(app MAIN_TID), not the main thread $V" >&2; exit 1; }
{
	echo "VICTIM_PID=$V"
	echo "CULPRIT_PID=$V"
	echo "CULPRIT_COMM=$(cat /proc/$V/task/$H/comm)"
	echo "CULPRIT_TID=$H"
	echo "CHAIN="
	echo "VICTIM_COMM=$(cat /proc/$V/comm)"
	echo "HOLDER_STATE=$(awk '{ print $3 }' /proc/$V/task/$H/stat 2>/dev/null)"
	echo "IN_WAIT_NS=$(app IN_WAIT_NS)"
	echo "READY=1"
} >>"$g"
wait "$V" || { echo "harness: the program failed: $(cat "$g.app.err")" >&2; exit 1; }
grep -q '^EXIT=0$' "$out" || { echo "harness: the program did not run to its end" >&2; exit 1; }
done_ns=$(app DONE_NS)
[ -n "$done_ns" ] || { echo "harness: the main thread never ticked again after the hold" >&2; exit 1; }
in_wait=$(app IN_WAIT_NS) hold_end=$(app HOLD_END_NS) call=$(app CALL_NS)
{
	echo "DONE_NS=$done_ns"
	echo "HOLD_END_NS=$hold_end"
	echo "CALL_NS=$call"
	echo "DONE_GAP_MS=$(app DONE_GAP_MS)"
	echo "NORMAL_ROUNDS=$(app NORMAL_ROUNDS)"
	echo "NORMAL_LATE=$(sed -n 's/^NORMAL_LATE=//p' "$out" | tail -n 1)"
} >>"$g"
[ "$(app NORMAL_ROUNDS)" = 3 ] || { echo "harness: $(app NORMAL_ROUNDS) normal rounds, not 3" >&2; exit 1; }
# each normal round made a tick wait for the GIL
[ "$(sed -n 's/^NORMAL_LATE=//p' "$out" | tail -n 1)" -ge 3 ] 2>/dev/null ||
	{ echo "harness: the loop waited for the GIL in $(sed -n 's/^NORMAL_LATE=//p' "$out" | tail -n 1) normal rounds, not 3" >&2; exit 1; }
# the holder's call lasted the hold (lldb's stops make it longer, never
# shorter), the main thread ran Python again only that long after
# IN_WAIT_NS, and right at the call's end (the GIL goes to it at the
# holder's first bytecode after the call, which may come before the
# holder reads the clock: HOLD_END_NS may come after DONE_NS)
hold_ns=$(awk -v h="$hold" 'BEGIN { printf "%.0f", h * 1e9 }')
[ "$call" -ge "$hold_ns" ] ||
	{ echo "harness: the holder's call took $((call / 1000000)) ms, under the hold of $hold s" >&2; exit 1; }
[ $((done_ns - in_wait)) -ge "$hold_ns" ] ||
	{ echo "harness: the main thread ticked $(( (done_ns - in_wait) / 1000000 )) ms after IN_WAIT_NS, under the hold of $hold s" >&2; exit 1; }
d=$((done_ns - hold_end))
[ "${d#-}" -le 100000000 ] ||
	{ echo "harness: the main thread ticked at $done_ns, $((d / 1000000)) ms from the holder's call's end at $hold_end" >&2; exit 1; }
exit 0
SH
} >"$T/harness.sh"

real_run_harness gil 3
log "the program: $(grep -E '^(CALL_NS|DONE_GAP_MS|HOLDER_STATE|NORMAL_ROUNDS|NORMAL_LATE)=' "$GT" | tr '\n' ' ')"
real_check_diagnose "$TRACE" "$GT"
real_check_hangs "$TRACE" "$GT"
real_keeper 6 "$COMM"
# (the culprit is a thread of the victim's process: no --until-end, above)
REAL_LIVE_CMDS=("live:argus diagnose --json")
real_live 8 3
real_live 8 random
real_finish "python: an asyncio loop waiting for the GIL in 5 ms timed futex waits is blamed on the thread holding it in one C call, in the trace, in argusd's kept snapshot and live in lldb"
