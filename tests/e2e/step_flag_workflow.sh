#!/usr/bin/env bash
# step_flag_workflow.sh - the documented data-flag workflow end to end on
# case_flag_spin (issue 13 §8, docs/user-guide.md), with nothing taken
# from the binary's symbol table:
#   1. a private collector (argus start);
#   2. during the hang (the UI thread spins on display_done), `argus flag`
#      finds the flag's address on the spinning thread;
#   3. `argus watch` on that address and size, still during the hang; the
#      clicks after the hang are normal runs whose flag writes the trace
#      now has;
#   4. argus save, argus diagnose --json: the culprit is display_server,
#      by the dataflag rule, and the flag is the app's FLAG_ADDR.
# Two attempts, each a whole run with its own collector and temp dir; the
# first one's failure stays in the output.  Why: about 1 run in 30 here the
# diagnosis has no dataflag edge.  Only two normal clicks follow the watch,
# and a click whose reply lands before the UI thread's first sched_yield
# (it was preempted right after its send) is a spin that never spun, which
# graph_flag.c cannot tell from a thread that does not read the flag
# (diagnosis limit; a wrong edge would be worse).  The first failure's
# writes and yields are in its evidence.
if [ -z "${E2E_WORKFLOW_ATTEMPT:-}" ]; then
	for attempt in 1 2; do
		E2E_WORKFLOW_ATTEMPT=$attempt bash "$0" "$@"
		rc=$?
		[ $rc -eq 0 ] || [ $rc -eq 77 ] && exit $rc     # passed, or skipped
		echo "[step_flag_workflow] attempt $attempt failed (output above)"
	done
	exit 1
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/step_lib.sh"
e2e_init "$1"
need_hw_watchpoints   # the writes are recorded by hardware watchpoints

start_collector --dir "$T/ring" --size 256M --no-watch-interactive
"$APPS/case_flag_spin" >"$T/app.out" 2>"$T/app.err" &
P=$!
E2E_PIDS+=("$P")
# the hang click is input 7 of 9, 150 ms apart: 1.05..3.55 s; inputs 8
# and 9, whose flag writes the watch must see, come at 3.85 and 4.0 s, so
# argus flag starts as soon as the spin does, not after a fixed sleep
wait_spinning "$P"
timeout -k 5 30 "$ARGUS" flag --pid "$P" --json >"$T/flag.json" 2>"$T/flag.err" ||
	fail "argus flag --pid $P failed" "$T/flag.err"
ADDR=$(printf '0x%x' "$(jget "$T/flag.json" 'j["flag"]["addr"]')")
LEN=$(jget "$T/flag.json" 'j["flag"]["size"]')
log "argus flag: $ADDR ($LEN bytes, $(jget "$T/flag.json" 'j["flag"]["symbol"]'))"
"$ARGUS" watch --pid "$P" --addr "$ADDR" --len "$LEN" >"$T/w.out" 2>"$T/w.err" ||
	fail "argus watch --pid $P --addr $ADDR --len $LEN failed" "$T/w.err"
log "$(cat "$T/w.out")"
wait "$P" || fail "case_flag_spin failed" "$T/app.err"
OUT=$T/app.out
[ "$((ADDR))" = "$(( $(kv FLAG_ADDR) ))" ] || fail "argus flag said $ADDR, the app's flag is $(kv FLAG_ADDR)"

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
"$ARGUS" diagnose "$T/s.argus" --pid "$(kv UI_PID)" --json >"$T/d.json" 2>"$T/d.err" ||
	fail "argus diagnose --json failed" "$T/d.err"
"$ARGUS" diagnose "$T/s.argus" --pid "$(kv UI_PID)" >"$T/d.txt" 2>&1 </dev/null || true
log "$(grep -E '^(flag|culprit|verdict)' "$T/d.txt" | sed 's/^/  /')"
# evidence for a failure below: the flag writes the watch recorded, with the
# spinning thread's syscalls around them (the dataflag edge needs the main
# thread in its yield loop when display_client's write lands)
"$ARGUS" dump "$T/s.argus" 2>/dev/null | grep -E "hwwatch|sched_yield" |
	grep -B3 -A3 hwwatch >"$T/writes.txt" || true
grep -q hwwatch "$T/writes.txt" || fail "the saved trace has no write of the watched flag" "$T/d.txt"
cat "$T/writes.txt" >>"$T/d.txt"
[ "$(jget "$T/d.json" 'j["hang"]["kind"]')" = yield ] || fail "the hang is not a yield hang" "$T/d.txt"
[ "$(jget "$T/d.json" 'j["culprit"]["comm"]')" = "$(kv CULPRIT_COMM)" ] ||
	fail "the culprit is not $(kv CULPRIT_COMM)" "$T/d.txt"
[ "$(jget "$T/d.json" 'j["culprit"]["tid"]')" = "$(kv CULPRIT_TID)" ] ||
	fail "the culprit is not thread $(kv CULPRIT_TID)" "$T/d.txt"
[ "$(jget "$T/d.json" 'j["culprit"]["rule"]')" = dataflag ] || fail "the culprit's rule is not dataflag" "$T/d.txt"
[ "$(jget "$T/d.json" 'j["flag"]["addr"]')" = "$(( $(kv FLAG_ADDR) ))" ] ||
	fail "the diagnosis' flag is not FLAG_ADDR" "$T/d.json"
pass "argus flag during the hang -> argus watch -> save -> diagnose: culprit $(kv CULPRIT_COMM) by the dataflag rule"
