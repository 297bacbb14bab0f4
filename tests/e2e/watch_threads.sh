#!/bin/bash
# e2e: `argus watch` covers every thread of the process, including a
# thread created after the watch was armed, and only the watched address.
#
# tests/apps/flag_writer prints where its `flag` is, waits for a GO file,
# then writes flag=1 from its main thread, creates a NEW thread that
# writes 0x1001..0x1005, joins it and writes flag=2.  Between its start
# and GO the test arms `argus watch --pid P --addr FLAG_ADDR` on a
# private collector (the process has one thread then).  Asserted, from
# `argus save` + `argus dump`:
#   - hwwatch events from the main thread with values 1 and 2, in order,
#     and the main thread's writes after it cloned are there too (the
#     kernel quirk hw_watch.c works around: a cookie lost at clone);
#   - 5 hwwatch events from NEW_TID, values 0x1001..0x1005 in order;
#   - every event names FLAG_ADDR and the watch id, none OTHER_ADDR;
#   - the events carry the writer's user stack (a frame in flag_writer);
#   - `argus watch --list` showed the watch with 1 thread before GO, and
#     after the process exited the watch is gone; `argus status` counts
#     7 writes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/watch_lib.sh"
e2e_init "$@"
need_hw_watchpoints   # the writes are recorded by hardware watchpoints
APP=$APPS/flag_writer
[ -x "$APP" ] || fail "no $APP (build first)"

start_collector --dir "$T/ring" --size 64M --no-watch-interactive
"$APP" "$T/go" >"$T/app.out" 2>"$T/app.err" &
P=$!
E2E_PIDS+=("$P")
for _ in $(seq 1 200); do grep -q OTHER_ADDR "$T/app.out" && break; sleep 0.01; done
ADDR=$(kv FLAG_ADDR "$T/app.out")
OTHER=$(kv OTHER_ADDR "$T/app.out")
[ "$(sym_addr "$APP" flag "$P")" = "$ADDR" ] || fail "nm + maps give $(sym_addr "$APP" flag "$P"), the app says $ADDR"
"$ARGUS" watch --pid "$P" --addr "$ADDR" >"$T/w.out" 2>"$T/w.err" || fail "argus watch failed" "$T/w.err"
log "$(cat "$T/w.out")"
ID=$(sed -n 's/^argus: watch \([0-9]*\) armed.*/\1/p' "$T/w.out")
[ -n "$ID" ] || fail "argus watch did not print the watch id" "$T/w.out"
"$ARGUS" watch --list >"$T/list1" 2>&1 || fail "argus watch --list failed" "$T/list1"
awk -v id="$ID" -v p="$P" '$1 == id && $2 == p && $5 == 1 { ok = 1 } END { exit !ok }' "$T/list1" ||
	fail "--list does not show watch $ID on $P with 1 thread" "$T/list1"
touch "$T/go"
wait "$P" || fail "flag_writer failed" "$T/app.err"
NEW=$(kv NEW_TID "$T/app.out")
[ "$NEW" != "$P" ] || fail "the new thread has the main thread's tid"
# the exit is seen by argusd within a drain or two
for _ in $(seq 1 50); do "$ARGUS" watch --list 2>&1 | has "no watches armed" && break; sleep 0.1; done
"$ARGUS" watch --list >"$T/list2" 2>&1
grep -q "no watches armed" "$T/list2" || fail "the watch outlived its process" "$T/list2"
"$ARGUS" status >"$T/status" 2>&1 || fail "argus status failed" "$T/status"
grep -q "^flag watch 0 armed (argus watch --list), 7 writes recorded" "$T/status" ||
	fail "argus status does not count 7 writes" "$T/status"
"$ARGUS" save -o "$T/s.argus" >/dev/null 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
dump_to "$T/s.argus" "$T/s.dump" --stacks
hw_events "$T/s.dump" >"$T/hw"
log "hwwatch events: $(tr '\n' ';' <"$T/hw")"
grep -qi " $OTHER " "$T/hw" && fail "a write to the unwatched OTHER_ADDR was recorded" "$T/hw"
awk -v a="$ADDR" -v id="$ID" '$3 != a || $5 != id { bad = 1 } END { exit bad }' "$T/hw" ||
	fail "an event names another address or watch id than $ADDR / $ID" "$T/hw"
[ "$(awk -v p="$P" '$1 == p { printf "%s,", $4 }' "$T/hw")" = "0x1,0x2," ] ||
	fail "the main thread's writes are not exactly 1 then 2" "$T/hw"
[ "$(awk -v t="$NEW" '$1 == t && $2 == '"$P"' { printf "%s,", $4 }' "$T/hw")" = "0x1001,0x1002,0x1003,0x1004,0x1005," ] ||
	fail "the thread created after the watch did not show its 5 writes" "$T/hw"
# the user stack: the frame under each hwwatch line names flag_writer
check_dump "$T/s.dump" '
hw = [e for e in ev if e["type"] == "hwwatch"]
ok = [e for e in hw if any("flag_writer" in f for f in frames(e))]
if len(hw) != 7 or len(ok) != 7:
	say("FAIL: %d hwwatch events, %d with a frame in flag_writer (want 7 and 7)" % (len(hw), len(ok))); show(hw); sys.exit(1)
' ||
	fail "not every hwwatch event has a user stack inside flag_writer" "$T/s.dump"
pass "7 writes of 2 threads (one born after the watch) recorded with values and stacks; the watch left with the process"
