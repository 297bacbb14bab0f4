#!/bin/bash
# e2e: stacks of processes shorter than the collector's poll (50 ms) are
# symbolized.  The collector reads /proc/PID/maps when it drains a stack;
# without a wake-up, ten `sleep 0.01` were gone by then and every one of
# their stacks was [unknown].  The first stack of a young process now wakes
# the collector (argus.bpf.c, young_wake()).  Asserts: at least 8 of the
# 10 sleeps' switch-outs into clock_nanosleep have a first frame that
# names clock_nanosleep in libc.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
SLEEP=$(command -v sleep)

record sl -- bash -c 'for i in 1 2 3 4 5 6 7 8 9 10; do "$0" 0.01; done' "$SLEEP"
dump_to "$TRACE" "$T/sl.dump" --stacks
check_dump "$T/sl.dump" '
sw = [e for e in ev if e["comm"] == "sleep" and e["type"] == "switch" and e.get("blocked", "") == "clock_nanosleep"]
named = [e for e in sw if e["stack"] and re.search(r"clock_nanosleep\+0x[0-9a-f]+ .*\[libc\.so\.6\]", frames(e)[0])]
if len(sw) < 10:
	say("FAIL: %d sleep switch-outs into clock_nanosleep, expected 10" % len(sw)); show(sw); sys.exit(1)
if len(named) < 8:
	say("FAIL: only %d of %d short-lived sleeps have a symbolized wait stack:" % (len(named), len(sw)))
	show(sw)
	sys.exit(1)
say("ok: %d of %d symbolized, e.g.\n    %s\n    %s" % (len(named), len(sw), named[0]["line"], frames(named[0])[0]))
' || fail "short-lived processes lost their stacks (see above)"
pass "stacks of 10 ms processes are symbolized"
