#!/bin/bash
# e2e: argus step / flag / step-diff inside lldb-16 (issue 13 §6), on case
# study 3 (tests/apps/case_flag_spin.c: the UI thread spins on the flag
# display_done with sched_yield, here for 8 s).  lldb owns the process, so the
# thread is stepped through lldb (SBThread::StepInstruction), not by a
# second ptrace.  With the real lldb-16 in batch mode:
#   1. help argus lists step, flag, step-diff and watch; `argus flag` with
#      no process, and a bad --until on an attached process, fail the
#      batch run with one clear error (the second with the plugin's usage);
#      `argus watch --addr` takes the attached pid (the CLI then checks
#      the address);
#   2. attached during the hang, `argus flag --json` names display_done:
#      the address the app printed (FLAG_ADDR), equal to nm's address moved
#      by the load bias from SPIN_FUNCTION_ADDR, read in
#      wait_for_display_flag, value 0; the process is still stopped after;
#   3. `argus step --count 200 --json` is clean JSON of 200 instructions of
#      the main thread;
#   4. `argus step --until 'left wait_for_display_flag' --record F` ends by
#      its condition (the spin times out; the thread returns), and
#      `argus step-diff F F` reads the recording back;
#   5. `argus step --tid` on display_client, blocked in read() for the
#      reply that never comes, ends by --syscall-timeout with a clear error
#      instead of hanging lldb;
#   6. after lldb detached the app ends normally (exit 0: no stray trap,
#      no SIGSTOP left pending, no thread left stopped).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/step_lib.sh"
. "$(dirname "$0")/lldb_lib.sh"
lldb_require

# JSON the line after "(lldb) CMD" of the last lldb run, into FILE.
json_after() {
	awk -v c="(lldb) $1" 'f { print; exit } $0 == c { f = 1 }' "$LLDB_OUT" >"$2"
	"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$2" 2>/dev/null ||
		fail "the output of '$1' is not one line of JSON" "$LLDB_OUT" 60
}

# -- 1. help and bad input -------------------------------------------------
lldb_run help -o "plugin load $PLUGIN" -o "help argus" -o "help argus step"
lldb_no_crash
[ "$LLDB_RC" -eq 0 ] || fail "help argus failed" "$LLDB_OUT"
for sub in step flag step-diff watch; do
	expect_in "$LLDB_OUT" "^ +$sub +-- " "help argus does not list '$sub'"
done
expect_in "$LLDB_OUT" '^Syntax: argus step \[--tid TID\] \[--count N \| --until COND\]' "help argus step has no syntax line"

lldb_run noproc -o "plugin load $PLUGIN" -o "argus flag --json"
lldb_no_crash
[ "$LLDB_RC" -ne 0 ] || fail "argus flag with no process did not fail the batch run" "$LLDB_OUT"
expect_in "$LLDB_OUT" '^error: argus flag: no process: attach to the app first' "no clear error without a process"
log "no process: $(grep '^error:' "$LLDB_OUT")"

sleep 60 &
SLEEPER=$!
E2E_PIDS+=("$SLEEPER")
lldb_run baduntil -p "$SLEEPER" -o "plugin load $PLUGIN" -o "argus step --until 'rip =='" -o "argus step --count 5"
lldb_no_crash
[ "$LLDB_RC" -ne 0 ] || fail "a bad --until did not fail the batch run" "$LLDB_OUT"
expect_in "$LLDB_OUT" "^error: argus step: --until 'rip ==': " "no clear error for a bad --until"
expect_in "$LLDB_OUT" '^usage: argus step \[--tid TID\]' "the bad --until error has not the plugin's usage"
grep -q '^(lldb) argus step --count 5' "$LLDB_OUT" && fail "lldb went on after the failed command" "$LLDB_OUT"
# watch defaults to the attached process: the CLI's own checks of the
# address come next (without --pid it would ask for one)
lldb_run watch -p "$SLEEPER" -o "plugin load $PLUGIN" -o "argus watch --addr 0x1001 --len 4"
lldb_no_crash
[ "$LLDB_RC" -ne 0 ] || fail "argus watch of an unaligned address did not fail" "$LLDB_OUT"
expect_in "$LLDB_OUT" '^error: argus watch: address 0x1001 is not aligned to --len 4' "argus watch in lldb did not check the address for the attached pid"
kill -KILL "$SLEEPER"
wait "$SLEEPER" 2>/dev/null
log "bad --until: $(grep '^error:' "$LLDB_OUT")"

# -- 2..4. during the hang -----------------------------------------------------
# an 8 s hang (the default is 2.5 s): everything up to the worker's step
# must happen inside it.  CI, on a loaded machine, attached near the end of
# a 2.5 s hang: the flag's stepping ran into the next input's spin, and
# display_client had a reply waiting, so its step did not block
start_app flag_spin 8000
# the hang click is input 7 of 9, 150 ms apart: the spin runs from about
# 1.05 s to 9.05 s after the start; attach once it has begun
wait_spinning "$APP_PID"
kill -0 "$APP_PID" 2>/dev/null || fail "case_flag_spin exited early" "$APP_ERR"
WORKER=$(grep -lx display_client /proc/"$APP_PID"/task/*/comm | head -n 1 | cut -d/ -f5)
[ -n "$WORKER" ] || fail "no display_client thread in $APP_PID"
# the last command fails by design (display_client waits in read() for a
# reply that never comes): lldb -b stops there and detaches on exit
lldb_run hang -p "$APP_PID" -o "plugin load $PLUGIN" \
	-o "argus flag --json" -o "process status" \
	-o "argus step --count 200 --json" \
	-o "argus step --until 'left wait_for_display_flag' --record $T/until.stp --json" \
	-o "argus step-diff $T/until.stp $T/until.stp --json" \
	-o "argus step --tid $WORKER --count 5 --syscall-timeout 500" \
	-o detach
lldb_no_crash
[ "$LLDB_RC" -ne 0 ] || fail "a step of a thread blocked in read() did not fail" "$LLDB_OUT" 60
expect_in "$LLDB_OUT" "^error: argus step: thread $WORKER stayed in a syscall longer than 500 ms \\(--syscall-timeout\\); stopped in it" \
	"the blocked thread's step did not end by --syscall-timeout"
[ "$(grep -c '^error:' "$LLDB_OUT")" = 1 ] || fail "an argus command before the last failed in lldb" "$LLDB_OUT" 60
json_after "argus flag --json" "$T/flag.json"
json_after "argus step --count 200 --json" "$T/step.json"
json_after "argus step --until 'left wait_for_display_flag' --record $T/until.stp --json" "$T/until.json"
json_after "argus step-diff $T/until.stp $T/until.stp --json" "$T/diff.json"
log "flag: $(cut -c1-300 "$T/flag.json")"
awk '/^\(lldb\) process status/ { f = 1; next } f { print; exit }' "$LLDB_OUT" | has "^Process $APP_PID stopped" ||
	fail "the process is not stopped after argus flag" "$LLDB_OUT" 60
wait_app

want=$(printf '%d' "$(kv FLAG_ADDR "$APP_OUT")")
bias=$(( $(printf '%d' "$(kv SPIN_FUNCTION_ADDR "$APP_OUT")") - $(nm_addr "$APPS/case_flag_spin" wait_for_display_flag) ))
from_nm=$(( bias + $(nm_addr "$APPS/case_flag_spin" display_done) ))
[ "$want" = "$from_nm" ] || fail "ground truth disagrees: FLAG_ADDR $want, nm+bias $from_nm"
[ "$(jget "$T/flag.json" 'j["flag"]["addr"]')" = "$want" ] || fail "flag addr is not FLAG_ADDR $want" "$T/flag.json"
[ "$(jget "$T/flag.json" 'j["flag"]["symbol"]')" = display_done ] || fail "flag symbol is not display_done" "$T/flag.json"
[ "$(jget "$T/flag.json" 'j["flag"]["size"]')" = "$(kv FLAG_SIZE "$APP_OUT")" ] || fail "flag size is not FLAG_SIZE" "$T/flag.json"
[ "$(jget "$T/flag.json" 'j["flag"]["value"]')" = 0 ] || fail "the spinning thread saw the flag set" "$T/flag.json"
case $(jget "$T/flag.json" 'j["flag"]["insn"]["where"]') in
wait_for_display_flag+*) ;;
*) fail "the read is not in wait_for_display_flag" "$T/flag.json" ;;
esac
[ "$(jget "$T/flag.json" 'j["tid"]')" = "$(kv UI_TID "$APP_OUT")" ] || fail "argus flag did not step the UI thread" "$T/flag.json"

[ "$(jget "$T/step.json" 'j["count"]')" = 200 ] || fail "argus step --count 200 did not step 200" "$T/step.json"
[ "$(jget "$T/step.json" 'len(j["insns"])')" = 200 ] || fail "argus step --count 200 listed not 200 instructions" "$T/step.json"
[ "$(jget "$T/step.json" 'j["tid"]')" = "$(kv UI_TID "$APP_OUT")" ] || fail "argus step did not step the UI thread" "$T/step.json"
[ "$(jget "$T/until.json" 'j["stopped"]')" = until ] || fail "--until 'left wait_for_display_flag' did not end by its condition" "$T/until.json"
[ "$(jget "$T/diff.json" 'j["diverged"]')" = False ] || fail "a recording differs from itself" "$T/diff.json"
pass "in lldb: argus flag named display_done at $(printf '0x%x' "$want") (FLAG_ADDR, nm + bias), read in wait_for_display_flag; step --count 200 gave 200; --until ended after $(jget "$T/until.json" 'j["count"]') instructions; the app ended normally"
