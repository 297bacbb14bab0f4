#!/bin/bash
# e2e: --wait-stacks gives blocking switch-outs DWARF-unwound stacks.
# tests/apps/busy.c --wait, built without frame pointers (busy_nofp):
# main -> busy_outer -> busy_middle -> wait_leaf -> poll(100 ms), 10 times.
# Asserts:
#   - without the flag (the premise): no switch of the app blocked in poll
#     has busy_outer in its stack (frame pointers cannot get there);
#   - with --wait-stacks: most of them have wait_leaf <- busy_middle <-
#     busy_outer, in order, symbolized;
#   - argus record says how many stacks it DWARF-unwound (> 0);
#   - the file header says which (argus dump: "wait stacks: ...").
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

for mode in plain wait; do
	if [ $mode = wait ]; then opts=(--wait-stacks); else opts=(); fi
	record "$mode" "${opts[@]}" -- "$APPS/busy_nofp" --wait 1
	dump_to "$TRACE" "$T/$mode.dump" --stacks
	if [ $mode = wait ]; then want="DWARF-unwound (--wait-stacks)"; else want="frame pointers only"; fi
	grep -q "^# snapshot from .*; wait stacks: $want\$" "$T/$mode.dump" ||
		fail "$mode: the trace's header does not say 'wait stacks: $want'" "$T/$mode.dump" 3
	export TID=$(kv TID) MODE=$mode
	check_dump "$T/$mode.dump" '
TID, MODE = int(ENV["TID"]), ENV["MODE"]
w = [e for e in ev if e["type"] == "switch" and e["tid"] == TID and e.get("blocked", "") == "poll"]
if len(w) < 5:
	say("FAIL: %d switches of tid %d blocked in poll (want ~10)" % (len(w), TID)); show(e for e in ev if e["tid"] == TID); sys.exit(1)
full = [e for e in w if 0 <= frame_at(e, "wait_leaf") < frame_at(e, "busy_middle") < frame_at(e, "busy_outer")]
outer = [e for e in w if frame_at(e, "busy_outer") >= 0]
say("%s: %d waits in poll, %d reach busy_outer, %d with wait_leaf <- busy_middle <- busy_outer" % (MODE, len(w), len(outer), len(full)))
if MODE == "plain":
	if outer:
		say("FAIL: frame pointers alone reached busy_outer: the premise does not hold"); show(outer[:1]); sys.exit(1)
	say("e.g.:"); show(w[:1]); sys.exit(0)
if len(full) * 2 < len(w):
	say("FAIL: fewer than half of the waits unwound to busy_outer"); show(w[:3]); sys.exit(1)
say("ok, e.g.:"); show(full[:1])
' || fail "$mode: blocking stacks not as expected (see above)"
done
unw=$(sed -n 's/.*; \([0-9]*\) stacks DWARF-unwound, \([0-9]*\) unwinds from the memo.*/\1 \2/p' "$T/wait.err")
log "argus record --wait-stacks: DWARF-unwound, from the memo: $unw"
[ "${unw%% *}" -gt 0 ] 2>/dev/null || fail "argus record reports no DWARF-unwound stack" "$T/wait.err"

# --wait-stacks --no-unwind copies the stacks but unwinds nothing: the
# header must not claim DWARF-unwound waits (diagnose's hint reads it)
record nounw --wait-stacks --no-unwind -- "$APPS/busy_nofp" --wait 1
dump_to "$TRACE" "$T/nounw.dump" --stats
grep -q "^# snapshot from .*; wait stacks: frame pointers only\$" "$T/nounw.dump" ||
	fail "--wait-stacks --no-unwind: the header claims unwound waits" "$T/nounw.dump" 3
pass "--wait-stacks: waits in poll unwound to wait_leaf <- busy_middle <- busy_outer without frame pointers"
