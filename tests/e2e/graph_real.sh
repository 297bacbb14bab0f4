#!/bin/bash
# e2e: the event graph of a real recording (issue 3's "real traces").
# Records pipe_pingpong (a parent and a child bouncing bytes over two
# pipes, each sleeping 2 ms before it writes) and timed_sleep (one thread,
# nanosleep x5) in one system-wide trace, builds the graph with
# `argus graph --pid ... --json`, and asserts against the apps' own ground
# truth:
#   - pipe writer -> reader: a `message` edge from the parent's segment to
#     the child's next segment, 4 bytes, that also woke it, into a segment
#     whose predecessor ended blocked in read() on pipe A's inode;
#   - the same in the other direction on pipe B;
#   - the sleeper: each segment after a nanosleep began woken by a `timer`
#     edge from its own previous segment (the expiry fired in hard-irq
#     context: re-attributed, not dropped);
#   - no edge from a timer interrupt to an unrelated thread: every timer
#     edge into these processes comes from the thread that armed it (all
#     their timers are their own sleeps), and no segment of theirs is
#     attributed to a hard-irq wake-up;
#   - --stats counts the filtered wake-ups and the graph's size.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
command -v python3 >/dev/null || fail "python3 is needed to check the JSON"

record both -- sh -c "\"$APPS/pipe_pingpong\" 10 2000 > $T/pp.out & \"$APPS/timed_sleep\" 5 30 > $T/ts.out; wait"

P=$(kv PARENT_PID "$T/pp.out"); C=$(kv CHILD_PID "$T/pp.out")
S=$(kv PID "$T/ts.out")
log "pingpong parent $P child $C, sleeper $S"

"$ARGUS" graph "$TRACE" --stats >"$T/stats" 2>"$T/stats.err" || fail "argus graph --stats failed" "$T/stats.err"
grep -q '^vertices: *[1-9]' "$T/stats" || fail "--stats shows no vertices" "$T/stats"
grep -q '^  message *[1-9]' "$T/stats" || fail "--stats shows no message edges" "$T/stats"
grep -q '^  timer *[1-9]' "$T/stats" || fail "--stats shows no timer edges" "$T/stats"
grep -q '^wake-ups: .* filtered' "$T/stats" || fail "--stats does not count filtered wake-ups" "$T/stats"

"$ARGUS" graph "$TRACE" --pid "$P" --pid "$C" --pid "$S" --json >"$T/g.json" 2>"$T/g.err" ||
	fail "argus graph --json failed" "$T/g.err"

python3 - "$T/g.json" "$T/pp.out" "$T/ts.out" <<'PY' || fail "graph assertions failed (see above)" "$T/stats"
import sys
from truth import check, done, load_json, load_kv
g, kv = load_json(sys.argv[1]), load_kv(*sys.argv[2:])
P, C = int(kv["PARENT_TID"]), int(kv["CHILD_TID"])
S = int(kv["SLEEPER_TID"])
INO_A, INO_B = int(kv["PIPE_A_INO"]), int(kv["PIPE_B_INO"])
nodes = {n["id"]: n for n in g["nodes"]}
edges = g["edges"]

def seg_before(n):
    """the same thread's segment that ended right before n began"""
    cands = [m for m in nodes.values() if m["tid"] == n["tid"] and m["end_ns"] <= n["start_ns"]]
    return max(cands, key=lambda m: m["end_ns"]) if cands else None

for (w, r, ino, name) in ((P, C, INO_A, "A"), (C, P, INO_B, "B")):
    msgs = [e for e in edges if e["type"] == "message"
            and nodes[e["src"]]["tid"] == w and nodes[e["dst"]]["tid"] == r]
    check(len(msgs) >= 9, f"pipe {name}: {len(msgs)} message edges {w} -> {r} (10 rounds)")
    good = 0
    for e in msgs:
        prev = seg_before(nodes[e["dst"]])
        wait = prev and prev.get("wait")
        if e["bytes"] == 4 and e["woke"] and wait and wait["syscall"] == "read" and wait["obj"] == ino:
            good += 1
    check(good >= 9, f"pipe {name}: {good} of them carry 4 B, woke the reader, "
          f"whose previous segment blocked in read on inode {ino}")

sleeps = [n for n in nodes.values() if n["tid"] == S and (n.get("wait") or {}).get("syscall") in ("nanosleep", "clock_nanosleep")]
check(len(sleeps) >= 5, f"sleeper: {len(sleeps)} segments ended in nanosleep (5 sleeps)")
timer_in = 0
for s in sleeps:
    nxt = [e for e in edges if e["src"] == s["id"] and e["type"] == "timer" and nodes[e["dst"]]["tid"] == S]
    if nxt and nodes[nxt[0]["dst"]]["woken_by"] == "edge" and nxt[0]["woke"]:
        timer_in += 1
check(timer_in >= 5, f"sleeper: {timer_in} wake-ups from nanosleep are timer edges from its own arming segment")

tids = {P, C, S}
timers = [e for e in edges if e["type"] == "timer" and nodes[e["dst"]]["tid"] in tids]
foreign = [e for e in timers if nodes[e["src"]]["tid"] != nodes[e["dst"]]["tid"]]
check(not foreign, f"no timer edge from another thread into these apps ({len(foreign)} found: {foreign[:3]})")
irq = [n for n in nodes.values() if n["tid"] in tids and n["woken_by"] == "hardirq"]
check(not irq, f"no segment of these apps attributed to a hard-irq wake-up ({len(irq)} found)")
done()
PY
pass "message edges match the pipes, timer edges are re-attributed to the sleeper, none cross to unrelated threads"
