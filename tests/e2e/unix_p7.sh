#!/bin/bash
# e2e: a unix-socket request/reply where the reply is sent by a different
# thread (W) than the one that received the request (R): the paper's P7
# (tests/apps/unix_p7).  X = client end's inode, Y = server end's.  Asserts:
#   - the client's send sys_exit has obj=unix:X->Y;
#   - R's recv sys_exit has obj=unix:Y->X (send.obj == recv.peer and
#     send.peer == recv.obj);
#   - W's send sys_exit has obj=unix:Y->X, the client's recv obj=unix:X->Y;
#   - R never sends and W never receives on the socket: the reply comes
#     from a different thread.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

record p7 -- "$APPS/unix_p7" 10 2000
dump_to "$TRACE" "$T/p7.dump"

export C=$(kv CLIENT_TID) R=$(kv R_TID) W=$(kv W_TID) X=$(kv CLIENT_INO) Y=$(kv SERVER_INO)
log "client tid $C, receiver R $R, worker W $W, client inode X=$X ($(printf '%#x' "$X")), server inode Y=$Y ($(printf '%#x' "$Y"))"
[ "$R" != "$W" ] || fail "the app's receiver and worker threads are the same ($R)"

check_dump "$T/p7.dump" '
C, R, W, X, Y = (int(ENV[k]) for k in ("C", "R", "W", "X", "Y"))
bad = 0
def io(tid, d):
	return [e for e in ev if e["type"] == "sys_exit" and e["tid"] == tid and e.get("sys", "").startswith(d) and e["ret"] > 0]
for who, tid, d, o, p in (("client", C, "send", X, Y), ("R", R, "recv", Y, X), ("W", W, "send", Y, X), ("client", C, "recv", X, Y)):
	all_ = io(tid, d)
	ok = [e for e in all_ if e.get("okind", "") == "unix" and e["obj"] == o and e["peer"] == p]
	if not ok:
		say("FAIL: no %s* sys_exit by %s (%d) with obj=unix:%s->%s\n  its %s* exits:" % (d, who, tid, h(o), h(p), d))
		show(all_)
		bad = 1
	else:
		say("ok: %d %s* by %s with obj=unix:%s->%s, e.g.\n    %s" % (len(ok), d, who, h(o), h(p), ok[0]["line"]))
# the reply is sent by W, not by R; the request is received by R, not by W
rsend = [e for e in io(R, "send") if e.get("okind", "") == "unix"]
wrecv = [e for e in io(W, "recv") if e.get("okind", "") == "unix"]
if rsend or wrecv:
	say("FAIL: R sent or W received on the socket (the app does neither):"); show(rsend + wrecv)
	bad = 1
# each request received by R is answered by W later on the same object pair
pairs = 0
wsend = [e for e in io(W, "send") if e.get("okind", "") == "unix" and e["obj"] == Y]
for r in (e for e in io(R, "recv") if e.get("okind", "") == "unix" and e["obj"] == Y):
	if any(e["ts"] >= r["ts"] for e in wsend):
		pairs += 1
if not pairs:
	say("FAIL: no send by W after a recv by R on the server end"); bad = 1
else:
	say("ok: %d requests received by R (%d) were followed by a reply from W (%d)" % (pairs, R, W))
sys.exit(bad)
' || fail "unix-socket P7 events are missing or wrong (see above)"
pass "unix P7: send/recv objects match across processes and threads (X=$X, Y=$Y), reply from W != R"
