#!/bin/bash
# e2e: a pipe ping-pong between two processes (tests/apps/pipe_pingpong).
# Pipe A carries "ping" from the parent (writer W) to the child (reader R).
# Asserts, against the inode and tids the app printed:
#   - a waking in task context (no ctx= field) by W whose target is R;
#   - R's switch-out blocked_in read(...) with obj=pipe:<A>;
#   - W's sys_exit write and R's sys_exit read both carry obj=pipe:<A>;
#   - order: W's waking of R, then W's write sys_exit on A's fd (the
#     waking happens inside the write), and R's read sys_exit on A after
#     the waking;
#   - no sys_enter of write: the entries of message calls are not recorded
#     by default (their exit carries the fd, object and result).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

record pp -- "$APPS/pipe_pingpong" 20 2000
dump_to "$TRACE" "$T/pp.dump"

export W=$(kv PARENT_TID) R=$(kv CHILD_TID) INO=$(kv PIPE_A_INO) WFD=$(kv PIPE_A_WFD)
log "writer tid $W, reader tid $R, pipe A inode $INO ($(printf '%#x' "$INO")), write fd $WFD"

check_dump "$T/pp.dump" '
W, R, INO, WFD = (int(ENV[k]) for k in ("W", "R", "INO", "WFD"))
bad = 0
wk = [e for e in ev if e["type"] == "waking" and e["tid"] == W and e.get("target_tid", -1) == R]
wk_task = [e for e in wk if e["ctx"] == "task"]
if not wk_task:
	say("FAIL: no waking in task context by the writer %d targeting the reader %d" % (W, R))
	say("  wakings targeting %d:" % R); show(e for e in ev if e["type"] == "waking" and e.get("target_tid", -1) == R)
	bad = 1
else:
	say("ok: %d task-context wakings %d -> %d, e.g.\n    %s" % (len(wk_task), W, R, wk_task[0]["line"]))

sw = [e for e in ev if e["type"] == "switch" and e["tid"] == R and e.get("blocked", "") == "read"]
sw_obj = [e for e in sw if e.get("okind", "") == "pipe" and e["obj"] == INO]
if not sw_obj:
	say("FAIL: no switch of the reader %d blocked_in read(...) with obj=pipe:%s" % (R, h(INO)))
	say("  the reader\x27s switch-outs:"); show(e for e in ev if e["type"] == "switch" and e["tid"] == R)
	bad = 1
else:
	say("ok: %d blocking switches of the reader in read on the pipe, e.g.\n    %s" % (len(sw_obj), sw_obj[0]["line"]))

for tid, sysname in ((W, "write"), (R, "read")):
	all_ = [e for e in ev if e["type"] == "sys_exit" and e["tid"] == tid and e.get("sys", "") == sysname]
	ok = [e for e in all_ if e.get("okind", "") == "pipe" and e["obj"] == INO]
	if not ok:
		say("FAIL: no sys_exit %s by %d with obj=pipe:%s" % (sysname, tid, h(INO)))
		say("  its %s exits:" % sysname); show(all_)
		bad = 1
	else:
		say("ok: %d sys_exit %s by %d on the pipe, e.g.\n    %s" % (len(ok), sysname, tid, ok[0]["line"]))

# order: waking W->R, then the next write exit of W is on fd A with obj A,
# and the next read exit of R after the waking is on A.
def next_exit(j, tid, sysname):
	for k in range(j + 1, len(ev)):
		x = ev[k]
		if x["type"] == "sys_exit" and x["tid"] == tid and x.get("sys", "") == sysname:
			return x
	return None
found = False
for j, w in enumerate(ev):
	if not (w["type"] == "waking" and w["tid"] == W and w.get("target_tid", -1) == R):
		continue
	x1 = next_exit(j, W, "write")
	if not (x1 and x1["arg0"] == WFD and x1.get("okind", "") == "pipe" and x1["obj"] == INO):
		continue
	x2 = next_exit(j, R, "read")
	if not (x2 and x2.get("okind", "") == "pipe" and x2["obj"] == INO):
		continue
	if not (w["ts"] <= x1["ts"] and w["ts"] <= x2["ts"]):
		continue
	found = True
	say("ok: order waking -> write exit (fd %d), and -> read exit:\n    %s\n    %s\n    %s" % (WFD, w["line"], x1["line"], x2["line"]))
	break
if not found:
	say("FAIL: never saw the writer\x27s waking of %d followed by its write sys_exit on fd %d and %d\x27s read sys_exit on the pipe" % (R, WFD, R))
	show(e for e in ev if e["tid"] in (W, R) and e["type"] in ("sys_enter", "sys_exit", "waking"))
	bad = 1
wenter = [e for e in ev if e["type"] == "sys_enter" and e.get("sys", "") in ("read", "write")]
if wenter:
	say("FAIL: read/write entries are recorded, but only their exits should be by default:")
	show(wenter)
	bad = 1
else:
	say("ok: no read/write sys_enter (exits only, by default)")
sys.exit(bad)
' || fail "pipe ping-pong events are missing or wrong (see above)"
pass "pipe: task-context waking writer->reader, blocked_in read on pipe:$INO, matching objects, ordered"
