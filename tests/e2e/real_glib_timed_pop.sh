#!/bin/bash
# e2e (real library): a GLib main loop that waits for a GThreadPool job by
# polling its result queue, 50 ms at a time (issue 26: argusd's live hang
# watch missed it, though `argus record` + `argus diagnose` named the
# culprit).  tests/apps/glib_timed_pop.c, on Debian's libglib2.0:
#
#   main    g_main_loop_run(); a g_timeout_add tick every 100 ms: the
#           first 5 are normal rounds (a quick job of ~2 ms pushed to a
#           GThreadPool of one thread, its result popped as below within
#           50 ms: what an app does all day), the 6th pushes the slow job,
#           then
#             while (!(r = g_async_queue_timeout_pop(results, 50000)))
#                     ;   /* retry */
#           timed futex waits that end by their own timeout, again and
#           again, until the result comes; then back to the loop, which
#           quits 300 ms later (exit 0)
#   worker  the pool's thread ("pool"): the slow job sleeps HOLD s
#           (g_usleep), then pushes the result: the culprit
#
# Ground truth, from the app itself (its pid, the worker's gettid(), the
# CLOCK_MONOTONIC ns when the main thread starts waiting and when it has
# the result, each printed and flushed at once) and from the harness
# (/proc: the main thread in futex, the worker in clock_nanosleep, the
# worker's comm).  Expected: the main thread's hang is blamed on the pool
# worker thread, which waits for nobody (a timer): no chain.  See
# real_lib.sh for the phases (record, hangs, lldb, argusd's keeper).
#
# Two choices, and why:
# - the normal rounds: with the slow job as the app's first (ROUNDS 0), a
#   recording names the worker only through the wake-up that ends the
#   hang; while the hang goes on (lldb's `argus diagnose`, argusd's kept
#   snapshot) there is none yet, and no earlier run of the wait to
#   compare with: "no culprit found: no normal run of this wait to
#   compare with, and no other thread woke it".  Real apps use their
#   pool before the job that hangs; so does this one.
# - the live phases ask only the plain `argus diagnose --json`, not
#   `--until-end`: lldb stops every thread of the process, the worker
#   too, so the futex word the main thread waits on cannot change and the
#   hang cannot end while lldb holds it (docs/diagnosis.md, "Waiting for
#   the end": a wait for another thread of the same process never ends
#   while a debugger holds them); each --until-end=40 would only wait out
#   its 40 s and answer ended=false.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/real_lib.sh"
APP=$APPS/glib_timed_pop
[ -x "$APP" ] || fail "no $APP (the build needs GLib's headers: libglib2.0-dev)"
ldd "$APP" | has 'libglib-2\.0\.so' || fail "$APP does not use libglib-2.0"
COMM=$(basename "$APP" | cut -c 1-15)

{
	printf 'APP=%q\n' "$APP"
	cat <<'SH'
set -u
hold=$1 g=$2
out=$g.app
hold_ms=$(awk -v h="$hold" 'BEGIN { printf "%d", h * 1000 }')
"$APP" "$hold_ms" sleep 5 >"$out" 2>"$g.app.err" &
V=$!
echo "$V" >>"$g.pids"
app() { sed -n "s/^$1=//p" "$out" | head -n 1; }
end=$((SECONDS + 10))
# the app says the main thread waits and which thread runs the job; /proc
# shows the main thread in futex (202) and the worker in its
# clock_nanosleep (230), twice in a row (not between two retries)
n=0
while [ $n -lt 2 ]; do
	W=$(app WORKER_TID)
	if [ -n "$(app IN_WAIT_NS)" ] && [ -n "$W" ] &&
		[ "$(cut -d' ' -f1 /proc/$V/task/$V/syscall 2>/dev/null)" = 202 ] &&
		[ "$(cut -d' ' -f1 /proc/$V/task/$W/syscall 2>/dev/null)" = 230 ]; then
		n=$((n + 1))
	else
		n=0
	fi
	kill -0 "$V" 2>/dev/null || { echo "harness: the app ended before the hang: $(cat "$g.app.err")" >&2; exit 1; }
	[ $SECONDS -lt $end ] || { echo "harness: the app never waited for its job" >&2; exit 1; }
	sleep 0.02
done
[ "$(app PID)" = "$V" ] || { echo "harness: the app says it is $(app PID), not $V" >&2; exit 1; }
{
	echo "VICTIM_PID=$V"
	echo "CULPRIT_PID=$V"
	echo "CULPRIT_COMM=$(cat /proc/$V/task/$W/comm)"
	echo "CULPRIT_TID=$W"
	echo "CHAIN="
	echo "VICTIM_COMM=$(cat /proc/$V/comm)"
	echo "WORKER_WCHAN=$(cat /proc/$V/task/$W/wchan 2>/dev/null)"
	echo "JOB_START_NS=$(app JOB_START_NS)"
	echo "IN_WAIT_NS=$(app IN_WAIT_NS)"
	echo "READY=1"
} >>"$g"
wait "$V" || { echo "harness: the app failed: $(cat "$g.app.err")" >&2; exit 1; }
grep -q '^EXIT=0$' "$out" || { echo "harness: the app did not run to its end" >&2; exit 1; }
got=$(app GOT_NS)
[ -n "$got" ] || { echo "harness: the app never got its job's result" >&2; exit 1; }
{
	echo "DONE_NS=$got"
	echo "NORMAL_ROUNDS=$(app NORMAL_ROUNDS)"
	echo "JOB_END_NS=$(app JOB_END_NS)"
	echo "RETRIES=$(app RETRIES)"
} >>"$g"
# the main thread waited the hold out, in timed pops (lldb's stops make
# fewer of them, never none)
[ $((got - $(app IN_WAIT_NS))) -ge $((hold_ms * 1000000 - 100000000)) ] ||
	{ echo "harness: the main thread had its result $(( (got - $(app IN_WAIT_NS)) / 1000000 )) ms after it began waiting, under the hold" >&2; exit 1; }
[ "$(app NORMAL_ROUNDS)" = 5 ] || { echo "harness: $(app NORMAL_ROUNDS) normal rounds, not 5" >&2; exit 1; }
[ "$(app RETRIES)" -ge 5 ] || { echo "harness: only $(app RETRIES) timed pops" >&2; exit 1; }
exit 0
SH
} >"$T/harness.sh"

real_run_harness glib 3
log "the app: $(grep -E '^(NORMAL_ROUNDS|RETRIES|JOB_START_NS|JOB_END_NS)=' "$GT" | tr '\n' ' ')"
real_check_diagnose "$TRACE" "$GT"
real_check_hangs "$TRACE" "$GT"
# (the culprit is a thread of the victim's process: no --until-end, above)
REAL_LIVE_CMDS=("live:argus diagnose --json")
real_live 8 3
real_live 8 random
if declare -F real_keeper >/dev/null; then
	real_keeper 6 "$COMM"
else
	log "real_keeper not defined yet"
fi
real_finish "glib: a main loop polling g_async_queue_timeout_pop is blamed on the GThreadPool worker, in the trace, live in lldb and in argusd's kept snapshot"
