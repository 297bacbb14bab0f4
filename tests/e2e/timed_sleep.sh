#!/bin/bash
# e2e: a timed sleep (tests/apps/timed_sleep: 5 x nanosleep 50 ms).
# Asserts an hrtimer_start by the sleeper's tid, then an hrtimer_expire
# with ctx=hardirq on the same timer=, then a waking with ctx=hardirq
# vec=hrtimer timer=<same> target=<sleeper>.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

record ts -- "$APPS/timed_sleep" 5 50
dump_to "$TRACE" "$T/ts.dump"

export S=$(kv SLEEPER_TID)
log "sleeper tid $S"

check_dump "$T/ts.dump" '
S = int(ENV["S"])
starts = [e for e in ev if e["type"] == "hrtimer_start" and e["tid"] == S and "timer" in e]
if not starts:
	say("FAIL: no hrtimer_start by the sleeper %d\n  its events:" % S); show(e for e in ev if e["tid"] == S)
	sys.exit(1)
say("ok: %d hrtimer_start by %d, e.g.\n    %s" % (len(starts), S, starts[0]["line"]))
chains = 0
shown = []
for s in starts:
	x = next((e for e in ev if e["type"] == "hrtimer_expire" and e.get("timer") == s["timer"] and e["ts"] >= s["ts"]), None)
	if not (x and x["ctx"] == "hardirq"):
		continue
	w = next((e for e in ev if e["type"] == "waking" and e.get("target_tid", -1) == S and e["ts"] >= x["ts"]), None)
	if not (w and w["ctx"] == "hardirq" and w.get("vec", "") == "hrtimer" and w.get("timer") == s["timer"]):
		continue
	if not shown:
		shown = [s, x, w]
	chains += 1
if not chains:
	say("FAIL: no hrtimer_start(sleeper) -> hrtimer_expire ctx=hardirq -> waking ctx=hardirq vec=hrtimer timer=same target=%d" % S)
	t = {e["timer"] for e in starts}
	say("  events on the sleeper\x27s timers and wakings of the sleeper:")
	show(e for e in ev if (e.get("timer") and e["timer"] in t) or (e["type"] == "waking" and e.get("target_tid", -1) == S))
	sys.exit(1)
say("ok: %d of %d sleeps show arm -> fire (hardirq) -> wake, e.g." % (chains, len(starts)))
for e in shown:
	say("    " + e["line"])
' || fail "timed sleep timer events are missing or wrong (see above)"
pass "timer: armed by the sleeper, fired in hard-irq, woke the sleeper (same timer)"
