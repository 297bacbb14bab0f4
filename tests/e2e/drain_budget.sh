#!/bin/bash
# e2e: a drain that stops at its budget loses nothing.  The collector
# drains at most 65536 records at a time (so chunks are cut on time), and
# libbpf moves past a record before handing it over: refusing one to stop
# used to drop it silently.  The recorded command stops argus record (its
# parent) while bench/event_flood makes a known number of write(2) calls,
# so that several budgets' worth wait in the ring, then lets it go on.
# Asserts: every one of the flood's writes has its sys_exit in the trace
# (exactly as many as it counted), and 0 lost.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
FLOOD=$BUILD/bin/event_flood
[ -x "$FLOOD" ] || fail "no $FLOOD (build first)"

record fl -- bash -c 'kill -STOP $PPID; "$0" 500000 1 2; kill -CONT $PPID' "$FLOOD"
export CALLS=$(sed -n 's/^calls=\([0-9]*\) .*/\1/p' "$OUT")
[ -n "$CALLS" ] || fail "event_flood printed no calls= line" "$OUT"
[ "$CALLS" -ge $((4 * 65536)) ] ||
	fail "the flood made only $CALLS calls: fewer than 4 drain budgets, the test would prove nothing"
grep -q ', 0 lost,' "$T/fl.err" || fail "events were lost" "$T/fl.err"
dump_to "$TRACE" "$T/fl.dump"
check_dump "$T/fl.dump" '
n = sum(1 for e in ev if e["comm"] == "event_flood" and e["type"] == "sys_exit" and e.get("sys", "") == "write" and e["arg0"] != 1)
if n != int(ENV["CALLS"]):
	say("FAIL: the flood made %s writes, the trace has %d of their exits" % (ENV["CALLS"], n))
	sys.exit(1)
say("ok: %s writes, %d exits recorded" % (ENV["CALLS"], n))
' || fail "records went missing across drain budgets (see above)"
pass "$CALLS writes made while the collector was stopped, all $CALLS recorded, 0 lost"
