#!/bin/bash
# e2e: `argus step` inside lldb steps through lldb-server directly
# (lldb-plugin/remote_step.cpp): the same recording as lldb's own
# stepping, lldb's view of the thread and its memory true afterwards, and
# signals handed on.  Checks 1-3 are in lldb_step_remote.py (one
# Python-hosted lldb-16, as python_flag.sh).  Check 4 is here, with the
# lldb-16 command line, where it failed (a Python-hosted lldb did not show
# it): `argus step --tid` of a thread that is not lldb's selected one
# leaves the selected thread's pc alone and the app ends normally.  CI saw
# the flush after remote steps write the stepped thread's pc into the
# selected thread, and the app crash after detach.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/step_lib.sh"
. "$(dirname "$0")/lldb_lib.sh"
lldb_require
APP=$APPS/step_determ
[ -x "$APP" ] || fail "no $APP"
"$PY" "$(dirname "$0")/lldb_step_remote.py" "$APP" "$PLUGIN" 3000 "$T" >"$T/check.out" 2>&1
rc=$?
cat "$T/check.out" | while read -r l; do log "$l"; done
[ $rc -eq 0 ] || fail "lldb_step_remote.py failed (exit $rc)" "$T/check.out" 40
[ "$(grep -c '^ok: ' "$T/check.out")" -eq 5 ] || fail "not all 5 checks ran" "$T/check.out"

# -- 4. a thread that is not the selected one --------------------------------
# spin_pause: the main thread spins in user code (remote steps), its worker
# sleeps; the worker is selected, the main thread stepped
"$APPS/spin_pause" 8 >"$T/spin.out" 2>"$T/spin.err" &
SPIN=$!
E2E_PIDS+=("$SPIN")
for _ in $(seq 100); do
	grep -q '^READY=1' "$T/spin.out" && break
	sleep 0.05
done
grep -q '^READY=1' "$T/spin.out" || fail "spin_pause printed no READY=1 in 5 s" "$T/spin.err"
WORKER=$(ls /proc/"$SPIN"/task | grep -vx "$SPIN")
[ "$(echo "$WORKER" | wc -w)" = 1 ] || fail "spin_pause $SPIN has not one worker thread: $WORKER"
lldb_run other -p "$SPIN" -o "plugin load $PLUGIN" -o "thread select 2" -o "thread info" \
	-o "register read rip" -o "argus step --tid $SPIN --count 203 --json" -o "register read rip" \
	-o "thread select 1" -o "register read rip" \
	-o "platform shell cat /proc/$SPIN/task/$SPIN/syscall" -o detach
lldb_no_crash
[ "$LLDB_RC" -eq 0 ] || fail "argus step --tid of a thread not selected failed" "$LLDB_OUT" 40
grep -q "^thread #2: tid = $WORKER," "$LLDB_OUT" || fail "thread 2 is not the worker $WORKER" "$LLDB_OUT" 40
mapfile -t pcs < <(grep -oE '^ +rip = 0x[0-9a-f]+' "$LLDB_OUT" | awk '{print $3}')
[ "${#pcs[@]}" = 3 ] || fail "not three register reads" "$LLDB_OUT" 40
[ "${pcs[0]}" = "${pcs[1]}" ] ||
	fail "stepping thread $SPIN moved the selected thread $WORKER: pc ${pcs[0]} before, ${pcs[1]} after" "$LLDB_OUT" 40
step_json=$(grep -m1 '^{"insns":' "$LLDB_OUT")
echo "$step_json" | "$PY" -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j["count"] == 203 and j["tid"] == int(sys.argv[1]) else 1)' "$SPIN" ||
	fail "argus step --tid $SPIN did not step 203 instructions of it" "$LLDB_OUT" 40
# and lldb sees the stepped thread where the kernel has it (the flush
# reached the right thread): "-1 SP PC" of the stopped main thread
kpc=$(grep -m1 -E '^-1 0x[0-9a-f]+ 0x[0-9a-f]+$' "$LLDB_OUT" | awk '{print $3}')
[ -n "$kpc" ] || fail "no /proc/$SPIN/task/$SPIN/syscall line from lldb's platform shell" "$LLDB_OUT" 40
[ $((pcs[2])) -eq $((kpc)) ] ||
	fail "after the steps lldb says thread $SPIN is at ${pcs[2]}, the kernel at $kpc" "$LLDB_OUT" 40
wait "$SPIN"
rc=$?
[ $rc -eq 0 ] || fail "spin_pause ended with status $rc after the detach, want 0" "$T/spin.err"
log "ok: stepping thread $SPIN left the selected thread $WORKER at ${pcs[0]}; lldb and the kernel agree on main's pc ${pcs[2]}; the app ended with exit 0"
pass
