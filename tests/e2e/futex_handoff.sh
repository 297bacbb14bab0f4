#!/bin/bash
# e2e: a futex handoff between two threads through a pthread mutex + cond
# (tests/apps/futex_handoff).  B posts and signals, A waits.  Asserts:
#   - a waking in task context by B targeting A;
#   - A's switch-out blocked_in futex(UADDR);
#   - a sys_enter futex by B whose uaddr (first arg) is such a UADDR, and
#     that uaddr lies inside the condition variable the app printed.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

record fh -- "$APPS/futex_handoff" 10 5000
dump_to "$TRACE" "$T/fh.dump"

export A=$(kv A_TID) B=$(kv B_TID) COND=$(kv COND_ADDR) CSIZE=$(kv COND_SIZE)
log "waiter A tid $A, signaller B tid $B, cond at $COND ($CSIZE bytes)"

check_dump "$T/fh.dump" '
A, B, COND, CSIZE = int(ENV["A"]), int(ENV["B"]), num(ENV["COND"]), int(ENV["CSIZE"])
bad = 0
wk = [e for e in ev if e["type"] == "waking" and e["tid"] == B and e.get("target_tid", -1) == A and e["ctx"] == "task"]
if not wk:
	say("FAIL: no waking in task context by B (%d) targeting A (%d)\n  wakings targeting A:" % (B, A))
	show(e for e in ev if e["type"] == "waking" and e.get("target_tid", -1) == A)
	bad = 1
else:
	say("ok: %d task-context wakings B -> A, e.g.\n    %s" % (len(wk), wk[0]["line"]))

sw = [e for e in ev if e["type"] == "switch" and e["tid"] == A and e.get("blocked", "") == "futex"]
uaddr = {e["barg"] for e in sw}
if not sw:
	say("FAIL: no switch of A (%d) blocked_in futex(...)\n  A\x27s switch-outs:" % A)
	show(e for e in ev if e["type"] == "switch" and e["tid"] == A)
	bad = 1
else:
	say("ok: %d switches of A blocked in futex, uaddrs %s\n    %s" % (len(sw), ",".join(h(u) for u in sorted(uaddr)), sw[0]["line"]))

be = [e for e in ev if e["type"] == "sys_enter" and e["tid"] == B and e.get("sys", "") == "futex"]
match = [e for e in be if e["args"][0] in uaddr]
if not match:
	say("FAIL: no futex sys_enter by B (%d) on an address A blocked on (%s)\n  B\x27s futex calls:" % (B, ",".join(h(u) for u in sorted(uaddr))))
	show(be)
	bad = 1
else:
	say("ok: %d futex calls of B on the uaddr A blocked on, e.g.\n    %s" % (len(match), match[0]["line"]))
	inside = [e for e in match if COND <= e["args"][0] < COND + CSIZE]
	if not inside:
		say("FAIL: the matching uaddr %s is not inside the condition variable [%s, +%d)" % (h(match[0]["args"][0]), h(COND), CSIZE))
		bad = 1
sys.exit(bad)
' || fail "futex handoff events are missing or wrong (see above)"
pass "futex: task-context waking B->A, A blocked_in futex on the uaddr B woke"
