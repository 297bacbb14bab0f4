#!/bin/bash
# e2e: argusd does not lose a hang while it is itself stalled.  A private
# collector watches the process name "reqwait" (--watch reqwait).  argusd
# is stopped (SIGSTOP) before reqwait sends its request, and continued
# (SIGCONT) only after the reply came 3 s later: no check ran while the
# request was past the threshold.  The BPF ring buffer kept the records;
# once argusd drains them, the hang is found when it ended:
#   - argusd's log says "found when it ended";
#   - a snapshot <time>-reqwait-<pid>.argus and its .json are kept, the
#     .json's live view says late, request, wait poll, and a duration
#     within the harness's own measure of the wait (python's monotonic
#     clock around poll());
#   - its stored diagnosis blames the server process (the harness's pid).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

PY=/usr/bin/python3
[ -x $PY ] || fail "needs $PY"
HD=$T/hangs
ln -s $PY "$T/reqwait"   # comm = the name it was exec'd by

start_collector --dir "$T/ring" --size 64M --no-watch-interactive --hang-dir "$HD" \
	--watch reqwait
D=$(collector_pid)
[ -n "$D" ] || fail "no argusd pid"

SOCKP=$T/srv.sock
$PY -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
print("ready", flush=True)
c, _ = s.accept(); c.recv(16); time.sleep(3); c.send(b"reply\n")
' "$SOCKP" >"$T/srv.out" &
SRV=$!
E2E_PIDS+=("$SRV")
for _ in $(seq 1 50); do grep -q ready "$T/srv.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$T/srv.out" || fail "the server did not start" "$T/srv.out"

"$T/reqwait" -c '
import os, select, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
print("pid=%d" % os.getpid(), flush=True)
time.sleep(0.5)            # the harness stops argusd meanwhile
s.send(b"req\n")
p = select.poll(); p.register(s, select.POLLIN)
t0 = time.monotonic(); p.poll(10000); s.recv(16)   # the reply, read as clients do
print("wait_ms=%d" % ((time.monotonic() - t0) * 1000), flush=True)
' "$SOCKP" >"$T/req.out" &
REQ=$!
E2E_PIDS+=("$REQ")
for _ in $(seq 1 50); do grep -q pid= "$T/req.out" 2>/dev/null && break; sleep 0.05; done
kill -STOP "$D" || fail "cannot stop argusd $D"
wait "$REQ"; rc=$?
kill -CONT "$D"
[ $rc = 0 ] || fail "the requesting client failed" "$T/req.out"
wait "$SRV"
WAIT_MS=$(kv wait_ms "$T/req.out")
[ "$WAIT_MS" -ge 2500 ] || fail "the client waited less than 2.5 s for its reply" "$T/req.out"

for _ in $(seq 1 300); do
	ls "$HD"/*-reqwait-$REQ.json >/dev/null 2>&1 && break
	sleep 0.1
done
ls -la "$HD" >"$T/hd.ls" 2>&1
cat "$ARGUS_RUN_DIR/argusd.log" >>"$T/hd.ls" 2>/dev/null
ls "$HD"/*-reqwait-$REQ.json >/dev/null 2>&1 ||
	fail "no snapshot of reqwait $REQ after argusd was continued" "$T/hd.ls"
grep -q "reqwait $REQ/$REQ .*found when it ended" "$ARGUS_RUN_DIR/argusd.log" ||
	fail "argusd's log does not say the hang was found when it ended" "$T/hd.ls"
$PY - "$HD"/*-reqwait-$REQ.json "$WAIT_MS" "$SRV" <<'EOF' || fail "the late snapshot's JSON is wrong" "$HD"/*-reqwait-$REQ.json
import json, sys
d = json.load(open(sys.argv[1]))
live, wait_ms, srv = d["live"], int(sys.argv[2]), int(sys.argv[3])
assert live["late"] is True and live["request"] is True and live["wait"] == "poll", live
assert not live["ongoing"], live
# from its last come-back (before the 0.5 s sleep) to the reply
assert wait_ms - 50 <= live["duration_ms"] <= wait_ms + 1500, (live, wait_ms)
assert d["diagnosis"]["culprit"]["pid"] == srv, d["diagnosis"]["culprit"]
EOF
pass "a request's 3 s wait while argusd was stopped: kept late ($(basename "$HD"/*-reqwait-$REQ.argus)), blamed on the server $SRV"
