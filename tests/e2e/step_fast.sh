#!/usr/bin/env bash
# step_fast.sh - `argus step --fast` (the thread steps itself through an
# injected SIGTRAP handler) records the same instructions as the ptrace
# path: a --fast recording and a ptrace recording of spin_socket's yield
# loop (syscalls included: the instruction after each syscall, which the
# trap skips, is put back) run in lockstep in `argus step-diff`.  Afterwards the process runs
# on untraced, its SIGTRAP action is its own again (not caught), the
# injected mapping is gone, and it ends normally when its writer sends.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/step_lib.sh"
e2e_init "$1"

start_app spin_socket 5
maps_before=$(wc -l <"/proc/$APP_PID/maps")
timeout -k 5 30 "$ARGUS" step --pid "$APP_PID" --fast --count 3000 --record "$T/fast.stp" >"$T/fast.out" 2>&1 ||
	fail "argus step --fast failed" "$T/fast.out"
log "$(cat "$T/fast.out")"
not_traced "$APP_PID"
sigcgt=$(awk '/^SigCgt:/ { print $2 }' "/proc/$APP_PID/status")
(( (16#$sigcgt >> 4) & 1 )) && fail "SIGTRAP is still caught (SigCgt $sigcgt): the handler was not taken out"
[ "$(wc -l <"/proc/$APP_PID/maps")" = "$maps_before" ] ||
	fail "the process has $(wc -l <"/proc/$APP_PID/maps") mappings, $maps_before before: the injected one stayed"
timeout -k 5 30 "$ARGUS" step --pid "$APP_PID" --count 3000 --record "$T/slow.stp" >"$T/slow.out" 2>&1 ||
	fail "argus step failed" "$T/slow.out"

"$ARGUS" step-diff "$T/slow.stp" "$T/fast.stp" --json >"$T/diff.json" 2>"$T/diff.err" || fail "step-diff failed" "$T/diff.err"
[ "$(jget "$T/diff.json" 'j["aligned"]')" = True ] || fail "the recordings share no instruction" "$T/diff.json"
[ "$(jget "$T/diff.json" 'j["diverged"]')" = False ] || fail "fast and ptrace recordings diverge" "$T/diff.json"
[ "$(jget "$T/diff.json" 'j["common"] > 2000')" = True ] || fail "fewer than 2000 instructions in lockstep" "$T/diff.json"
wait "$APP_PID" || fail "spin_socket did not end normally after --fast" "$APP_OUT.err"
pass "--fast and ptrace recordings agree for $(jget "$T/diff.json" 'j["common"]') instructions; the process ended normally, handler and mapping gone"
