#!/bin/bash
# e2e: the data-flag workflow of case study 3 done entirely from lldb-16
# (issue 13 §8: "the same through lldb"), as a user types it:
#   1. a private collector runs (argus start);
#   2. during the hang (the UI thread spins on display_done), lldb
#      attaches, `argus flag --watch` steps the selected (UI) thread
#      through lldb, finds the flag, and arms `argus watch` on it with the
#      UI thread as its reader; lldb detaches;
#   3. the app runs on: its normal clicks after the hang write the flag
#      (the watch records each write);
#   4. a second lldb session, no process attached: `argus diagnose --pid
#      UI --json` snapshots the collector and names display_server.
# Ground truth: the app's own printout (FLAG_ADDR, UI_PID, UI_TID,
# CULPRIT_COMM) and nm's address of display_done moved by the load bias.
# Also: `argus flag --watch` with no collector fails with one clear error
# after printing the flag (the flag is still found).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/step_lib.sh"
. "$(dirname "$0")/lldb_lib.sh"
lldb_require

# -- without a collector: the flag, then a clear error ----------------------
start_app flag_spin
wait_spinning "$APP_PID"
lldb_run nocoll -p "$APP_PID" -o "plugin load $PLUGIN" -o "argus flag --watch" -o "detach"
lldb_no_crash
[ "$LLDB_RC" -ne 0 ] || fail "argus flag --watch with no collector did not fail the batch run" "$LLDB_OUT"
expect_in "$LLDB_OUT" '^flag 0x[0-9a-f]+ \(4 bytes\) = 0 +display_done\+0x0' "the flag was not printed before the watch failed"
# (lldb may put its own warning first, on the "error:" line: stepping
# through the vDSO's assembler frames)
expect_in "$LLDB_OUT" '^(error: )?argus flag: the collector is not running' "no clear error when the collector is not running"
# lldb -b stops at the error: the process is released when lldb exits
wait_app
log "without a collector: the flag printed, then '$(grep -m1 -E '^(error: )?argus flag: ' "$LLDB_OUT")'"

need_hw_watchpoints "argus flag --watch without a collector"
# -- the workflow -----------------------------------------------------------
start_collector --dir "$T/ring" --size 256M --no-watch-interactive
start_app flag_spin
wait_spinning "$APP_PID"
lldb_run flag -p "$APP_PID" -o "plugin load $PLUGIN" -o "argus flag --watch" -o "detach"
lldb_no_crash
[ "$LLDB_RC" -eq 0 ] || fail "lldb: argus flag --watch failed" "$LLDB_OUT" 60
expect_in "$LLDB_OUT" '^flag 0x[0-9a-f]+ \(4 bytes\) = 0 +display_done\+0x0' "argus flag did not name display_done"
expect_in "$LLDB_OUT" "^argus: watch [0-9]+ armed: process $APP_PID, 0x[0-9a-f]+ \(4 bytes\), .*; reader thread [0-9]+" "argus flag --watch did not arm the watch with a reader"
ADDR=$(grep -m1 -oE '^flag 0x[0-9a-f]+' "$LLDB_OUT" | cut -d' ' -f2)
READER=$(grep -m1 -oE 'reader thread [0-9]+' "$LLDB_OUT" | awk '{print $3}')
not_traced "$APP_PID"
wait_app
want=$(printf '%d' "$(kv FLAG_ADDR "$APP_OUT")")
bias=$(( $(printf '%d' "$(kv SPIN_FUNCTION_ADDR "$APP_OUT")") - $(nm_addr "$APPS/case_flag_spin" wait_for_display_flag) ))
[ "$(( bias + $(nm_addr "$APPS/case_flag_spin" display_done) ))" = "$want" ] ||
	fail "ground truth disagrees: FLAG_ADDR $want vs nm + bias"
[ "$(printf '%d' "$ADDR")" = "$want" ] || fail "the flag lldb found ($ADDR) is not FLAG_ADDR ($want)" "$LLDB_OUT"
[ "$READER" = "$(kv UI_TID "$APP_OUT")" ] || fail "the watch's reader ($READER) is not the UI thread" "$LLDB_OUT"

UI=$(kv UI_PID "$APP_OUT")
lldb_run diag -o "plugin load $PLUGIN" -o "argus diagnose --pid $UI --json"
lldb_no_crash
[ "$LLDB_RC" -eq 0 ] || fail "lldb: argus diagnose --pid $UI failed" "$LLDB_OUT" 60
awk -v c="(lldb) argus diagnose --pid $UI --json" 'f { print; exit } $0 == c { f = 1 }' "$LLDB_OUT" >"$T/d.json"
"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/d.json" 2>/dev/null ||
	fail "lldb's argus diagnose --json did not print one line of JSON" "$LLDB_OUT" 60
[ "$(jget "$T/d.json" 'j["hang"]["pid"]')" = "$UI" ] || fail "the diagnosis is not of the app's hang" "$T/d.json"
[ "$(jget "$T/d.json" 'j["culprit"]["comm"]')" = "$(kv CULPRIT_COMM "$APP_OUT")" ] ||
	fail "the culprit is not $(kv CULPRIT_COMM "$APP_OUT")" "$T/d.json"
[ "$(jget "$T/d.json" 'j["culprit"]["rule"]')" = dataflag ] || fail "the culprit's rule is not dataflag" "$T/d.json"
[ "$(jget "$T/d.json" 'j["flag"]["addr"]')" = "$want" ] || fail "the diagnosis' flag is not FLAG_ADDR" "$T/d.json"
pass "in lldb: argus flag --watch during the hang (display_done, reader $READER), then argus diagnose: culprit $(kv CULPRIT_COMM "$APP_OUT") by the dataflag rule"
