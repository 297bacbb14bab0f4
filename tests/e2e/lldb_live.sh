#!/bin/bash
# e2e: what the lldb plugin adds over the CLI on a live process, on case
# study 2 (tests/apps/case_busy.c, the UI thread busy for 2.5 s in
# paste_reformat_text -> reflow_line -> measure_glyphs).  Real BPF, the
# real lldb-16:
#   1. symbols through lldb's target: the app runs from a copy that is
#      renamed once its hang has begun, so the path the trace recorded for
#      it no longer exists.  Inside lldb, the culprit's trace stack still
#      names measure_glyphs (lldb has the module as loaded) and the report
#      says lldb symbolized it; the plain CLI on the same snapshot can only
#      print module offsets (case_busy+0x...): the names came from lldb;
#   2. a running process: after `process continue` (async, as an
#      interactive lldb is), `argus diagnose` stops the process to read its
#      threads, shows them, and resumes it; lldb does not hang;
#   3. `argus export --format dot --pid PID` writes a Graphviz file of the
#      app's segments; `argus pick` without N answers with the choices
#      state instead of failing;
#   4. `argus lldb-init` writes ~/.lldbinit (a private HOME), and an lldb
#      started with it has the `argus` command without `plugin load`.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/lldb_lib.sh"
lldb_require

start_collector --dir "$T/ring" --size 256M

# -- 1..3: a copy of the app, renamed inside its hang ----------------------
mkdir -p "$T/bin"
cp "$APPS/case_busy" "$T/bin/case_busy"
APP_OUT=$T/busy.out
APP_ERR=$T/busy.err
# CASE_LINGER_MS: the app idles in its loop for 8 s after its last input
# instead of exiting, so it outlives this lldb session however slow it is
CASE_LINGER_MS=8000 "$T/bin/case_busy" >"$APP_OUT" 2>"$APP_ERR" &
APP_PID=$!
E2E_PIDS+=("$APP_PID")
log "started $T/bin/case_busy, pid $APP_PID"
wait_in_hang running 700
mv "$T/bin/case_busy" "$T/bin/case_busy.moved"
[ -e "$T/bin/case_busy" ] && fail "the app's binary is still at its first path"

lldb_run live -p "$APP_PID" -o "plugin load $PLUGIN" \
	-o "argus diagnose" \
	-o "argus save -o $T/snap.argus" \
	-o "argus export --format dot --pid $APP_PID -o $T/app.dot" \
	-o "argus pick" \
	-o "script lldb.debugger.SetAsync(True)" \
	-o "process continue" \
	-o "argus diagnose --no-save" \
	-o "script import time; p = lldb.debugger.GetSelectedTarget().GetProcess(); [time.sleep(0.1) for _ in range(30) if p.GetState() != lldb.eStateRunning]; print('state after:', lldb.SBDebugger.StateAsCString(p.GetState()))" \
	-o "script print('end of session'); lldb.debugger.GetSelectedTarget().GetProcess().Detach()"
# (detach through Python: the app may finish its hang and exit while the
# last commands run, and a failing `detach` would fail the batch run; a
# process still attached when lldb -b quits is killed)
lldb_no_crash
[ "$LLDB_RC" -eq 0 ] || fail "the lldb session failed" "$LLDB_OUT" 120
wait_app
UI=$(kv UI_TID "$APP_OUT")
HOT=$(kv HOT_FUNCTION "$APP_OUT")
O=$LLDB_OUT

# 1. lldb named the frames the trace's symbolizer cannot
sed -n '/^(lldb) argus diagnose$/,/^(lldb) argus save/p' "$O" >"$T/diag1.txt"
expect_in "$T/diag1.txt" "^culprit +textedit $APP_PID/$UI \\(process textedit\\), busy" "the culprit is not the UI thread, busy"
sed -n '/^culprit/,/^verdict/p' "$T/diag1.txt" >"$T/culprit1.txt"
expect_in "$T/culprit1.txt" "^ +$HOT\\+0x[0-9a-f]+ \\(case_busy.c:[0-9]+\\) \\[case_busy.moved\\]" \
	"the culprit's trace stack is not symbolized by lldb (the moved binary) with $HOT"
expect_in "$T/diag1.txt" "^symbols +[0-9]+ frame\\(s\\) of process $APP_PID symbolized by lldb's target" \
	"the report does not say lldb symbolized the attached process"
"$ARGUS" hangs "$T/snap.argus" --pid "$APP_PID" --threshold 100 --json >"$T/hangs.json" 2>"$T/hangs.err" ||
	fail "argus hangs on the snapshot failed" "$T/hangs.err"
AT=$(grep -o '"start_ns":[0-9]*' "$T/hangs.json" | head -n 1 | cut -d: -f2)
[ -n "$AT" ] || fail "the CLI finds no hang in the snapshot" "$T/hangs.json"
"$ARGUS" diagnose "$T/snap.argus" --pid "$APP_PID" --threshold 100 --at "$((AT + 1000000))" >"$T/cli.txt" 2>&1 ||
	fail "the CLI's diagnose of the snapshot failed" "$T/cli.txt"
sed -n '/^culprit/,/^verdict/p' "$T/cli.txt" >"$T/culprit_cli.txt"
expect_in "$T/culprit_cli.txt" "^ +case_busy\\+0x[0-9a-f]+" \
	"the CLI alone does not fall back to module offsets (the test would not tell lldb's symbols apart)"
grep -qE "^ +$HOT\\+0x" "$T/culprit_cli.txt" &&
	fail "the CLI alone named $HOT: the binary's old path still resolves, the test proves nothing" "$T/culprit_cli.txt"
log "lldb: $(grep -E "^ +$HOT\\+0x" "$T/culprit1.txt" | head -n 1 | sed 's/^ *//')"
log "CLI:  $(grep -E '^ +case_busy\+0x' "$T/culprit_cli.txt" | head -n 1 | sed 's/^ *//')"

# 2. the running process was stopped, read and resumed
sed -n '/^(lldb) argus diagnose --no-save$/,/^(lldb) script print/p' "$O" >"$T/diag2.txt"
expect_in "$T/diag2.txt" "^lldb +the report's threads of process $APP_PID as lldb sees them now \\(stopped for this, resumed after" \
	"diagnose on the running process did not stop, read and resume it"
expect_in "$T/diag2.txt" "^  hang\\+culprit +thread #1 tid $UI \"textedit\"" "the UI thread is not matched to lldb's thread #1"
grep -q "could not resume" "$T/diag2.txt" && fail "the process was left stopped" "$T/diag2.txt"
# (the public state turns "running" once lldb's event thread has seen the
# resume: the check polls up to 3 s)
expect_in "$O" "^state after: running" "the process is not running after diagnose resumed it"

# 3. the DOT export and the pick dialog
[ -s "$T/app.dot" ] || fail "argus export --format dot wrote nothing" "$O"
head -n 1 "$T/app.dot" | has '^digraph argus {' || fail "the DOT file does not start a digraph" "$T/app.dot"
grep -qE "label=\"#[0-9]+ textedit $UI/$APP_PID" "$T/app.dot" || fail "the DOT file has no segment of the UI thread" "$T/app.dot"
grep -oE ' [0-9]+/[0-9]+\\nstart' "$T/app.dot" | sed 's/.*\///; s/\\nstart//' | sort -u >"$T/dot.pids"
[ "$(cat "$T/dot.pids")" = "$APP_PID" ] || fail "the DOT file has segments of other processes than --pid $APP_PID" "$T/dot.pids"
[ "$(stat -c %a "$T/app.dot")" = 600 ] || fail "the DOT file is not private (mode $(stat -c %a "$T/app.dot"))"
expect_in "$O" "^answers so far: none" "argus pick without N does not show the dialog's state"

# -- 4. argus lldb-init ------------------------------------------------------
mkdir -p "$T/home"
HOME=$T/home "$ARGUS" lldb-init >"$T/init.out" 2>&1 || fail "argus lldb-init failed" "$T/init.out"
expect_in "$T/home/.lldbinit" "^plugin load $PLUGIN\$" "~/.lldbinit has no plugin load line"
HOME=$T/home "$ARGUS" lldb-init >"$T/init2.out" 2>&1 || fail "a second argus lldb-init failed" "$T/init2.out"
expect_in "$T/init2.out" "already loads" "a second lldb-init is not idempotent"
[ "$(grep -c 'plugin load' "$T/home/.lldbinit")" = 1 ] || fail "lldb-init added the line twice" "$T/home/.lldbinit"
HOME=$T/home timeout -k 5 60 "$LLDB_BIN" -b -o "help argus" >"$T/init.lldb" 2>&1 </dev/null ||
	fail "lldb with the new ~/.lldbinit failed" "$T/init.lldb"
expect_in "$T/init.lldb" "^ +diagnose +-- " "lldb started with ~/.lldbinit has no argus command"
HOME=$T/home "$ARGUS" lldb-init --remove >"$T/init3.out" 2>&1 || fail "argus lldb-init --remove failed" "$T/init3.out"
grep -q "argus" "$T/home/.lldbinit" && fail "lldb-init --remove left an Argus line" "$T/home/.lldbinit"

pass "lldb symbolized the moved binary's $HOT (the CLI alone could not), a running process stopped/read/resumed, DOT export, pick dialog, lldb-init"
