#!/bin/bash
# e2e: the lldb plugin on case study 2 (tests/apps/case_busy.c: the UI
# thread itself is busy for 2.5 s in paste_reformat_text -> reflow_line ->
# measure_glyphs).  With real BPF and the real lldb-16:
#   1. `help argus` lists every subcommand; a second `plugin load` is
#      refused with a clear message, and lldb survives it;
#   2. a bad argument (argus diagnose --depth banana, and --depth=banana)
#      fails the batch run with the CLI's message and the plugin's usage,
#      before any snapshot;
#   3. attached while the app is in its hang, `argus diagnose` takes the
#      hang in progress and names the UI thread, busy, with measure_glyphs
#      on its stack, and shows that thread as lldb sees it (index, name,
#      frames from lldb's unwinder); the app then exits 0 and its ground
#      truth (UI_TID, HOT_FUNCTION) agrees;
#   4. attached before the hang (the UI thread in poll), `argus diagnose`
#      does not take the debugger's own stop for a hang: it fails saying
#      the UI thread is in its event-loop wait.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/lldb_lib.sh"
lldb_require

# -- 1. help, and loading twice ------------------------------------------
lldb_run help -o "plugin load $PLUGIN" -o "help argus" -o "help argus diagnose"
lldb_no_crash
[ "$LLDB_RC" -eq 0 ] || fail "help argus failed" "$LLDB_OUT"
for sub in status save hangs diagnose show similar slice diff pick export; do
	expect_in "$LLDB_OUT" "^ +$sub +-- " "help argus does not list '$sub'"
done
expect_in "$LLDB_OUT" '^Syntax: argus diagnose \[--tid TID\] \[--at TIME' "help argus diagnose has no syntax line"

lldb_run twice -o "plugin load $PLUGIN" -o "plugin load $PLUGIN" -o "help argus"
lldb_no_crash
[ "$LLDB_RC" -ne 0 ] || fail "a second plugin load succeeded silently" "$LLDB_OUT"
expect_in "$LLDB_OUT" 'argus: the plugin is already loaded' "the second load does not say why it was refused"
log "second load: $(grep 'already loaded' "$LLDB_OUT")"

# -- 2. a bad argument -----------------------------------------------------
sleep 60 &
SLEEPER=$!
E2E_PIDS+=("$SLEEPER")
lldb_run badarg -p "$SLEEPER" -o "plugin load $PLUGIN" -o "argus diagnose --depth banana" -o "help argus"
lldb_no_crash
[ "$LLDB_RC" -ne 0 ] || fail "argus diagnose --depth banana did not fail the batch run" "$LLDB_OUT"
expect_in "$LLDB_OUT" "^error: argus diagnose: --depth wants a number from 1 to [0-9]+, got 'banana'" \
	"no clear message for --depth banana"
expect_in "$LLDB_OUT" '^usage: argus diagnose \[--tid TID\]' "the usage shown is not the plugin's"
grep -q 'argus: saved' "$LLDB_OUT" && fail "a bad argument still took a snapshot" "$LLDB_OUT"
grep -q '^(lldb) help argus' "$LLDB_OUT" && fail "lldb -b went on after the failed command" "$LLDB_OUT"
# --depth=banana, the other form of the same flag, fails the same way
lldb_run badarg_eq -p "$SLEEPER" -o "plugin load $PLUGIN" -o "argus diagnose --depth=banana"
lldb_no_crash
[ "$LLDB_RC" -ne 0 ] || fail "argus diagnose --depth=banana did not fail the batch run" "$LLDB_OUT"
expect_in "$LLDB_OUT" "^error: argus diagnose: --depth wants a number from 1 to [0-9]+, got 'banana'" \
	"--depth=banana is not refused like --depth banana"
kill "$SLEEPER" 2>/dev/null
log "bad argument: $(grep '^error:' "$LLDB_OUT")"

# -- 3. attached in the hang -------------------------------------------------
start_collector --dir "$T/ring" --size 256M
# 0.6 s into the 2.5 s hang (an ongoing hang ends where the debugger
# stopped the thread, so the time under lldb does not count).  On a loaded
# machine lldb can take longer than the rest of the hang to attach; then it
# stops the app back in poll, which is not what this part tests: it runs
# again with a fresh app (at most 3 times).
for try in 1 2 3; do
	start_app busy
	wait_in_hang running 600
	lldb_run hang -p "$APP_PID" -o "plugin load $PLUGIN" -o "argus diagnose" -o "detach"
	lldb_no_crash
	[ "$LLDB_RC" -eq 0 ] || fail "argus diagnose in lldb failed" "$LLDB_OUT" 80
	wait_app
	grep -qE '^ +frame #0: .*poll' "$LLDB_OUT" || break
	log "try $try: lldb stopped the app back in poll (a slow attach missed the hang); again"
	[ "$try" -lt 3 ] || fail "three attaches in a row missed the 2.5 s hang" "$LLDB_OUT" 20
done
UI=$(kv UI_TID "$APP_OUT")
HOT=$(kv HOT_FUNCTION "$APP_OUT")
CALLER=$(kv HOT_CALLER "$APP_OUT")
[ "$(kv CULPRIT_TID "$APP_OUT")" = "$UI" ] || fail "ground truth: the culprit is not the UI thread" "$APP_OUT"
O=$LLDB_OUT
expect_in "$O" '^ *\(the ongoing hang of the main thread' "diagnose did not take the hang in progress"
expect_in "$O" "^hang +textedit $APP_PID/$UI \\(process textedit\\)" "the hang is not the UI thread $UI's"
expect_in "$O" '^ +away from its event loop for [0-9.]+ ms \(still at the end of the trace\); busy' \
	"the hang is not an ongoing busy one"
expect_in "$O" "^culprit +textedit $APP_PID/$UI \\(process textedit\\), busy" "the culprit is not the UI thread, busy"
sed -n '/^culprit/,/^verdict/p' "$O" >"$T/culprit.txt"
expect_in "$T/culprit.txt" "^ +$HOT\\+0x" "the culprit's trace stack does not name $HOT"
expect_in "$O" "^verdict +textedit \\($UI\\) itself: busy on its own thread" "wrong verdict"
# the live view: lldb's thread, index and name, with frames from its unwinder
expect_in "$O" "^lldb +the report's threads of process $APP_PID as lldb sees them now" "no live view"
expect_in "$O" "^  hang\\+culprit +thread #1 tid $UI \"textedit\"" "the UI thread is not matched to lldb's thread #1"
expect_in "$O" "^ +#[0-9]+ +0x[0-9a-f]+ case_busy\`$CALLER \\+ [0-9]+ at case_busy.c:[0-9]+ +\\[also in the trace's stack\\]" \
	"lldb's frames of the UI thread do not show $CALLER beside the trace's stack"
log "$(sed -n '/^hang/,/^verdict/p' "$O" | grep -E '^(hang|culprit|verdict)')"
log "live: $(grep -E "^ +#[0-9]+ .*$CALLER" "$O" | head -n 1)"

# -- 4. attached before the hang: no false hang ----------------------------
# The app waits idle in poll() 3 s before its first keystroke (IDLE_MS):
# with the paste 1.05 s after the start, an attach that took 0.6 s or more
# (1.1-1.25 s on this VM when it is slow, session 22) landed in the hang,
# three tries in a row.  Should one still land outside poll, it runs again
# with a fresh app (at most 3 times).
for try in 1 2 3; do
	APP_OUT=$T/busy.out
	APP_ERR=$T/busy.err
	"$APPS/case_busy" 3000 >"$APP_OUT" 2>"$APP_ERR" &
	APP_PID=$!
	E2E_PIDS+=("$APP_PID")
	log "started case_busy 3000 (idle 3 s first), pid $APP_PID"
	sleep 0.4     # the UI thread waits in poll()
	lldb_run idle -p "$APP_PID" -o "plugin load $PLUGIN" -o "platform shell sleep 2.2" -o "argus diagnose"
	lldb_no_crash
	grep -qE '^ +frame #0: .*poll' "$LLDB_OUT" && break
	log "try $try: lldb stopped the app outside poll (a slow attach landed in the hang); again"
	kill -KILL "$APP_PID" 2>/dev/null
	wait "$APP_PID" 2>/dev/null
	[ "$try" -lt 3 ] || fail "three attaches in a row missed the app's idle time before its hang" "$LLDB_OUT" 20
done
[ "$LLDB_RC" -ne 0 ] || fail "argus diagnose found a hang while the UI thread was idle in poll" "$LLDB_OUT" 80
expect_in "$LLDB_OUT" '^error: argus diagnose: .*: no hang of process [0-9]+ \(threshold 2000 ms\)' \
	"no clear 'not hung now' error"
log "idle: $(grep '^error:' "$LLDB_OUT")"
wait_app
pass "help, second load, bad argument, hang in progress diagnosed in lldb (UI thread busy in $HOT, lldb's thread #1 beside it), no false hang"
