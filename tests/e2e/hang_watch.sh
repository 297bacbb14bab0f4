#!/bin/bash
# e2e: argusd's always-on hang reports.  A private collector watches three
# process names (--watch flock, --watch idlepoll, --watch reqwait) with a
# private --hang-dir and --hang-keep 2.  No `argus save` is ever run.
#
#  1. a real flock(1) waits 3 s for a lock another process holds, while a
#     watched "idlepoll" sits 5 s in poll() with nothing outstanding:
#     exactly one snapshot appears by itself, the flock's, named
#     <time>-flock-<pid>.argus, 0600; it covers the hang's start (its first
#     event is older than the harness's clock reading taken before flock
#     started, and it holds flock's switch-out into the flock() wait);
#     `argus hangs --saved` (text and --json) lists it with pid, duration
#     and kind; `argus diagnose SNAP --pid P --json` opens it; both, and
#     the .json argusd stored, name the lock's holder as the culprit; so
#     does the report page argusd wrote beside it (<name>.html, 0600);
#  2. a watched "reqwait" writes a request on a unix socket and waits in
#     poll() 3 s for the reply (a request, not idle): a second snapshot,
#     whose stored diagnosis blames the server;
#  3. a second flock hang: a third snapshot, and with --hang-keep 2 the
#     oldest (the first flock's) is removed; `argus status` says
#     seen 3, kept 3, removed 1.
# Ground truth: the harness's pids and CLOCK_MONOTONIC readings
# (python's time.monotonic_ns(), the trace's clock), not argus's words.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

PY=/usr/bin/python3
[ -x $PY ] || fail "needs $PY"
command -v flock >/dev/null || fail "needs flock (util-linux)"
HD=$T/hangs
L=$T/lock
# the comm of a process is the name it was exec'd by: these are python
ln -s $PY "$T/idlepoll"
ln -s $PY "$T/reqwait"

start_collector --dir "$T/ring" --size 64M --no-watch-interactive --hang-dir "$HD" --hang-keep 2 \
	--watch flock --watch idlepoll --watch reqwait
grep -q "snapshots go to $HD" "$T/start.out" || fail "argus start does not say where the snapshots go" "$T/start.out"

# wait_json NAME-PID: wait (30 s at most) until the snapshot of process
# NAME-PID has its .json (written last, after the snapshot)
wait_json() {
	for _ in $(seq 1 300); do
		ls "$HD"/*-"$1".json >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	ls -la "$HD" >"$T/hd.ls" 2>&1
	cat "$ARGUS_RUN_DIR/argusd.log" >>"$T/hd.ls" 2>/dev/null
	# what the collector saw of that process, for the next reader
	if "$ARGUS" save -o "$T/evidence.argus" >/dev/null 2>&1; then
		echo "---- argus dump --pid ${1##*-} (last 60 lines) ----" >>"$T/hd.ls"
		"$ARGUS" dump "$T/evidence.argus" --pid "${1##*-}" 2>&1 | tail -60 >>"$T/hd.ls"
	fi
	fail "no snapshot of $1 with its .json in $HD after 30 s" "$T/hd.ls" 120
}

# ---- 1: a flock hang, and an idle poller that must not count ----
"$T/idlepoll" -c '
import os, select, time
r, w = os.pipe()
time.sleep(0.3)            # a new segment: nothing written before the wait
p = select.poll(); p.register(r, select.POLLIN)
t0 = time.monotonic(); p.poll(5000)
print("idle_ms=%d" % ((time.monotonic() - t0) * 1000))
' >"$T/idle.out" &
IDLE=$!
E2E_PIDS+=("$IDLE")
flock_hang 3.2 "$L"
W1=$WAITER; B1=$T_BEFORE; H1=$HOLDERS
log "flock waiter $W1 waited for the lock; idle poller $IDLE"
wait "$IDLE" || fail "the idle poller failed" "$T/idle.out"
idle_ms=$(kv idle_ms "$T/idle.out")
[ "$idle_ms" -ge 4500 ] || fail "the idle poller waited only $idle_ms ms in poll()"
wait_json flock-$W1
sleep 1 # a second snapshot, if one were coming, would be due by now
ls "$HD" >"$T/hd1.ls"
n=$(ls "$HD"/*.argus | wc -l)
[ "$n" = 1 ] || fail "want exactly one snapshot (flock $W1's), found $n" "$T/hd1.ls"
S1=$(ls "$HD"/*.argus)
case $(basename "$S1") in
	[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9]-flock-$W1.argus) ;;
	*) fail "the snapshot is not <time>-flock-$W1.argus" "$T/hd1.ls" ;;
esac
grep -q idlepoll "$T/hd1.ls" && fail "the idle poller got a snapshot" "$T/hd1.ls"
[ "$(stat -c %a "$S1")" = 600 ] && [ "$(stat -c %u "$S1")" = 0 ] || fail "$S1 is not root's 0600"
[ "$(stat -c %a "$HD")" = 700 ] || fail "$HD is not 0700"
log "kept by itself: $(basename "$S1")"

# it covers the hang's start: first event before the harness's reading,
# and flock's switch-out into its flock() wait
dump_to "$S1" "$T/s1.dump"
B1=$B1 W1=$W1 check_dump "$T/s1.dump" '
B1, W1 = int(ENV["B1"]), int(ENV["W1"])
first = ev[0]["ts"]
if first > B1:
	say("snapshot starts at %d, after the harness saw flock start (%d)" % (first, B1)); sys.exit(1)
w = [e for e in ev if e["pid"] == W1 and e["type"] == "switch" and e.get("blocked", "") == "flock"]
if not w:
	say("no switch of flock %d into its flock() wait:" % W1); show(e for e in ev if e["pid"] == W1); sys.exit(1)
blocked = w[0]["ts"]
back = next((e for e in ev if e["type"] == "switch" and e.get("next_tid") == W1 and e["ts"] > blocked + 2e9), None)
if not back:
	say("flock %d is never switched back in 2 s or more after it blocked" % W1); show(w); sys.exit(1)
say("    blocked at %.3f, back at %.3f (%.2f s)" % (blocked / 1e9, back["ts"] / 1e9, (back["ts"] - blocked) / 1e9))
' || fail "the snapshot does not cover flock $W1's hang"

J1=${S1%.argus}.json
[ "$(stat -c %a "$J1")" = 600 ] || fail "$J1 is not 0600"
$PY - "$J1" "$W1" "$H1" <<'EOF' || fail "the stored JSON does not describe flock $W1's hang and its holder ($H1)" "$J1"
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
assert d["pid"] == pid and d["tid"] == pid and d["comm"] == "flock", d
live = d["live"]
assert live["kind"] == "blocked" and live["wait"] == "flock", live
assert 2500 <= live["duration_ms"] <= 6000, live
# the diagnosis argusd stored names the lock's holder (the harness's pids)
cul = d["diagnosis"]["culprit"]
assert cul["pid"] in [int(x) for x in sys.argv[3].split()], (cul, sys.argv[3])
assert d["report"] == sys.argv[1].rsplit("/", 1)[1][:-5] + ".html", d.get("report")
EOF

# ... and its page (argus report), 0600, whose embedded diagnosis names
# the same holder
R1=${S1%.argus}.html
[ -f "$R1" ] || fail "no report page $R1 beside the snapshot" "$T/hd1.ls"
[ "$(stat -c %a "$R1")" = 600 ] && [ "$(stat -c %u "$R1")" = 0 ] || fail "$R1 is not root's 0600"
$PY - "$R1" "$H1" <<'EOF' || fail "the report page's embedded diagnosis does not name the holder ($H1)" "$R1"
import json, re, sys
html = open(sys.argv[1]).read()
m = re.search(r'<script type="application/json" id="argus-diagnosis">(.*?)</script>', html, re.S)
assert m, "no argus-diagnosis script in the page"
d = json.loads(m.group(1).replace("<\\/", "</"))
assert d["culprit"]["pid"] in [int(x) for x in sys.argv[2].split()], d["culprit"]
EOF

"$ARGUS" hangs --saved >"$T/saved.txt" 2>"$T/saved.err" || fail "argus hangs --saved failed" "$T/saved.err"
log "hangs --saved:"; sed 's/^/    /' "$T/saved.txt"
grep -qE "^1 hang snapshot in $HD" "$T/saved.txt" || fail "hangs --saved does not count 1 snapshot in $HD" "$T/saved.txt"
grep -qE " flock +$W1/$W1 +blocked +[3-5]\.[0-9] s" "$T/saved.txt" ||
	fail "hangs --saved does not list flock $W1/$W1, blocked, 3-5 s" "$T/saved.txt"
"$ARGUS" hangs --saved --json >"$T/saved.json" || fail "argus hangs --saved --json failed"
$PY - "$T/saved.json" "$W1" "$S1" <<'EOF' || fail "hangs --saved --json is wrong" "$T/saved.json"
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
s = d["snapshots"]
assert len(s) == 1 and s[0]["pid"] == pid and s[0]["file"] == sys.argv[3], s
assert s[0]["kind"] == "blocked" and not s[0]["ongoing"] and s[0]["duration_ms"] > 2500, s
EOF

# argus diagnose opens it and names the holder
timeout 120 "$ARGUS" diagnose "$S1" --pid "$W1" --json >"$T/diag1.json" 2>"$T/diag1.err" ||
	fail "argus diagnose $S1 --pid $W1 --json failed" "$T/diag1.err"
$PY - "$T/diag1.json" "$W1" "$H1" <<'EOF' || fail "argus diagnose --json on the snapshot: not flock $W1's hang, or not its holder ($H1)" "$T/diag1.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["hang"]["pid"] == int(sys.argv[2]) and d["hang"]["kind"] == "blocked", d["hang"]
assert d["culprit"]["pid"] in [int(x) for x in sys.argv[3].split()], d["culprit"]
EOF
log "diagnose: culprit $(grep -o '"culprit":{"pid":[0-9]*,"tid":[0-9]*,"comm":"[^"]*"' "$T/diag1.json")"
grep -qE " flock +$W1/$W1 .*culprit [^ ]+ ($(echo $H1 | tr ' ' '|'))/" "$T/saved.txt" ||
	fail "hangs --saved does not name the holder ($H1) as flock $W1's culprit" "$T/saved.txt"

# ---- 2: a request waiting in poll() for its reply is a hang ----
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
"$T/reqwait" -c '
import os, select, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
time.sleep(0.2)
s.send(b"req\n")           # the request, then poll() for the reply
p = select.poll(); p.register(s, select.POLLIN)
t0 = time.monotonic(); p.poll(10000); s.recv(16)   # the reply, read as clients do
print("pid=%d" % os.getpid()); print("wait_ms=%d" % ((time.monotonic() - t0) * 1000))
' "$SOCKP" >"$T/req.out" &
REQ=$!
E2E_PIDS+=("$REQ")
wait "$REQ" || fail "the requesting client failed" "$T/req.out"
wait "$SRV"
[ "$(kv wait_ms "$T/req.out")" -ge 2500 ] || fail "the client waited less than 2.5 s for its reply" "$T/req.out"
wait_json reqwait-$REQ
ls "$HD" >"$T/hd2.ls"
ls "$HD"/*-reqwait-$REQ.argus >/dev/null 2>&1 || fail "no snapshot of reqwait $REQ (a request waiting in poll)" "$T/hd2.ls"
$PY - "${HD}"/*-reqwait-$REQ.json <<'EOF' || fail "the reqwait snapshot's JSON does not say it was a request" "$HD"/*-reqwait-$REQ.json
import json, sys
live = json.load(open(sys.argv[1]))["live"]
assert live["request"] is True and live["wait"] == "poll", live
EOF
$PY - "${HD}"/*-reqwait-$REQ.json "$SRV" <<'EOF' || fail "the reqwait snapshot's diagnosis does not blame the server $SRV" "$HD"/*-reqwait-$REQ.json
import json, sys
cul = json.load(open(sys.argv[1]))["diagnosis"]["culprit"]
assert cul["pid"] == int(sys.argv[2]), cul
EOF
log "a request waiting in poll: $(basename "$HD"/*-reqwait-$REQ.argus)"

# ---- 3: the count bound removes the oldest ----
flock_hang 3 "$L"
W2=$WAITER
wait_json flock-$W2
for _ in $(seq 1 50); do [ -e "$S1" ] || break; sleep 0.1; done
ls "$HD" >"$T/hd3.ls"
[ -e "$S1" ] && fail "--hang-keep 2: the oldest snapshot $S1 was not removed" "$T/hd3.ls"
[ -e "$J1" ] && fail "--hang-keep 2: the oldest snapshot's .json was not removed" "$T/hd3.ls"
[ -e "$R1" ] && fail "--hang-keep 2: the oldest snapshot's report page was not removed" "$T/hd3.ls"
[ "$(ls "$HD"/*.argus | wc -l)" = 2 ] || fail "--hang-keep 2: want 2 snapshots" "$T/hd3.ls"
ls "$HD"/*-flock-$W2.argus >/dev/null 2>&1 || fail "no snapshot of the second flock hang ($W2)" "$T/hd3.ls"
ls "$HD"/*-reqwait-$REQ.argus >/dev/null 2>&1 || fail "the newer reqwait snapshot was removed" "$T/hd3.ls"
"$ARGUS" status >"$T/status.out" || fail "argus status failed"
grep -qE '^hangs +seen 3, kept 3, removed 1, failed 0' "$T/status.out" ||
	fail "argus status does not say seen 3, kept 3, removed 1" "$T/status.out"
log "$(grep -E '^(hangs|watching)' "$T/status.out" | tr -s ' ' | tr '\n' ';')"
"$ARGUS" hangs --saved >"$T/saved3.txt" || fail "argus hangs --saved failed"
head -n 2 "$T/saved3.txt" | tail -n 1 | has -E " flock +$W2/$W2 " ||
	fail "hangs --saved does not list the newest (flock $W2) first" "$T/saved3.txt"
pass "flock $W1 and $W2 and a poll() request kept by themselves, the idle poller not; oldest removed at --hang-keep 2"
