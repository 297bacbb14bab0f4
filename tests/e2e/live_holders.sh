#!/bin/bash
# e2e: the live holder sources (docs/diagnosis.md "Live holders") on real
# programs, the way a user meets a hang still going: a private collector,
# `argus save --last 20s` a few seconds into the hang, then
# `argus diagnose FILE --pid VICTIM --json` on that fresh trace of the
# running system (live by default: diag_front_resolve_live).  No mocks.
#
#   1. a shell waiting for its child: sh -c 'sleep 15; true' blocks in
#      wait4 for the sleep.  The culprit is the sleep (rule child), found
#      from /proc/PID/task/TID/children: "live": {"source": "children"};
#   2. a python3 client blocked in recv() on a loopback TCP connection to
#      a python3 server that read the request and never answers (it
#      sleeps).  The culprit is the server (rule peer-holder), found from
#      /proc/net/tcp and /proc/PID/fd: "live": {"source": "tcp-peer"};
#   3. the same server stopped with SIGSTOP: the culprit is still the
#      server, and its "live" says "stopped": "signal";
#   4. continued, then held in a ptrace stop by another python3 (a tracer
#      that is not ours): the server's "live" says "stopped": "ptrace"
#      with that tracer, and the tracer is the next entry (rule tracer,
#      "live": {"source": "tracer"}).
# Ground truth: the pids the harness started (/proc/PID/task/PID/children
# for the sleep), the server's port, /proc/PID/stat's state and
# /proc/PID/status's TracerPid before each save.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
PY=/usr/bin/python3
[ -x $PY ] || fail "no $PY (scripts/install-deps.sh installs python3)"

mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 128M --no-watch-interactive

# bg NAME CMD...: CMD in the background, its stdout/stderr in $T/NAME.*;
# sets BG (killed by lib.sh's EXIT trap)
bg() {
	local name=$1
	shift
	"$@" >"$T/$name.out" 2>"$T/$name.err" &
	BG=$!
	E2E_PIDS+=("$BG")
}

# wait_for SECS DESC CMD...: until CMD succeeds, SECS at most
wait_for() {
	local secs=$1 desc=$2 i
	shift 2
	for ((i = 0; i < secs * 20; i++)); do
		"$@" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "$desc: not within $secs s"
}

# state PID: the one-letter state of /proc/PID/stat
state() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
is_state() { [ "$(state "$1")" = "$2" ]; }
tracer_of() { sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
in_syscall() { [ "$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null)" = "$2" ]; }

# save_diagnose NAME VICTIM: argus save --last 20s, then diagnose --json
# into $T/NAME.json (and the text report into $T/NAME.txt)
save_diagnose() {
	local name=$1 victim=$2 f=$T/$1.argus
	timeout -k 5 60 "$ARGUS" save --last 20s -o "$f" >"$T/$name.save" 2>&1 ||
		fail "argus save --last 20s -o $f failed" "$T/$name.save"
	timeout -k 5 120 "$ARGUS" diagnose "$f" --pid "$victim" --json >"$T/$name.json" 2>"$T/$name.derr" ||
		fail "argus diagnose $f --pid $victim --json failed" "$T/$name.derr"
	timeout -k 5 120 "$ARGUS" diagnose "$f" --pid "$victim" >"$T/$name.txt" 2>&1 ||
		fail "argus diagnose $f --pid $victim failed" "$T/$name.txt"
	log "$name: $(grep -E '^(culprit|then|verdict) ' "$T/$name.txt" | tr -s ' ' | cut -c1-220 | tr '\n' '|')"
}

# check NAME PYTHON-ASSERTIONS: the JSON of NAME as `d`, chain entries as
# `c` (culprit first); ground truth through os.environ
check() {
	local name=$1 code=$2
	$PY - "$T/$name.json" "$T/$name.txt" <<PYEOF || fail "$name: the diagnosis is not what the live system says (report below)" "$T/$name.txt" 60
import json, os, sys
d = json.load(open(sys.argv[1]))
c = ([d["culprit"]] if d["culprit"] else []) + d["chain"]
E = os.environ
def need(cond, what):
    if not cond:
        print("FAIL: " + what, file=sys.stderr)
        print("chain: " + json.dumps([{k: e.get(k) for k in ("pid", "tid", "comm", "rule", "live")} for e in c]), file=sys.stderr)
        sys.exit(1)
need(d["hang"]["ongoing"], "the hang is still going at the end of the trace")
$code
PYEOF
}

# ---- 1. a shell waiting for its child --------------------------------
bg shell sh -c 'sleep 15; true'
SH=$BG
wait_for 5 "the sleep child of sh $SH" grep -qE '[0-9]' "/proc/$SH/task/$SH/children"
KID=$(awk '{print $1}' "/proc/$SH/task/$SH/children")
wait_for 5 "sh $SH in wait4" in_syscall "$SH" 61
sleep 3
log "1. sh $SH waits for its child sleep $KID (state $(state "$KID"))"
save_diagnose child "$SH"
SH=$SH KID=$KID check child '
need(c and c[0]["pid"] == int(E["KID"]), "the culprit is the sleep child %s" % E["KID"])
need(c[0]["rule"] == "child", "rule child, not %s" % c[0]["rule"])
need(c[0]["live"] == {"source": "children"}, "live source children, not %s" % c[0]["live"])
need(d["hang"]["pid"] == int(E["SH"]), "the hang is sh'"'"'s")
'
grep -q '(live: /proc/PID/task/TID/children) \[rule: child\]' "$T/child.txt" ||
	fail "1: the report does not say where the child came from" "$T/child.txt"

# ---- 2. a loopback TCP client waiting for a server that never answers --
cat >"$T/server.py" <<'PY'
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
print("PORT=%d" % s.getsockname()[1], flush=True)
c, _ = s.accept()
c.recv(64)                      # the request...
print("GOT_REQUEST=1", flush=True)
time.sleep(120)                 # ...never answered
PY
cat >"$T/client.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"ping\n")
print("SENT=1", flush=True)
s.recv(64)                      # blocks: the server never answers
PY
bg server $PY "$T/server.py"
SV=$BG
wait_for 5 "the server's port" grep -q '^PORT=' "$T/server.out"
PORT=$(sed -n 's/^PORT=//p' "$T/server.out")
bg client $PY "$T/client.py" "$PORT"
CL=$BG
wait_for 5 "the server got the request" grep -q '^GOT_REQUEST=1' "$T/server.out"
wait_for 5 "the client in recvfrom" in_syscall "$CL" 45
sleep 3
log "2. client $CL waits in recv on 127.0.0.1:$PORT, served by $SV (state $(state "$SV"))"
save_diagnose tcp "$CL"
SV=$SV check tcp '
need(c and c[0]["pid"] == int(E["SV"]), "the culprit is the server %s" % E["SV"])
need(c[0]["rule"] == "peer-holder", "rule peer-holder, not %s" % c[0]["rule"])
need(c[0]["holder"] is True, "holder true")
need(c[0]["live"] == {"source": "tcp-peer"}, "live source tcp-peer, not %s" % c[0]["live"])
'
grep -q '(live: /proc/net/tcp, /proc/PID/fd) \[rule: peer-holder\]' "$T/tcp.txt" ||
	fail "2: the report does not say where the server came from" "$T/tcp.txt"

# ---- 3. the server stopped by a signal ----------------------------------
kill -STOP "$SV"
wait_for 5 "the server stopped (state T)" is_state "$SV" T
sleep 1
save_diagnose stopped "$CL"
SV=$SV check stopped '
need(c and c[0]["pid"] == int(E["SV"]), "the culprit is still the server %s" % E["SV"])
need(c[0]["live"].get("source") == "tcp-peer", "named from the TCP table")
need(c[0]["live"].get("stopped") == "signal", "the server is stopped by a signal: %s" % c[0]["live"])
need(len(c) == 1, "a stopped server'"'"'s own wait is not followed")
'
grep -q 'stopped by a signal now' "$T/stopped.txt" || fail "3: the report does not say the server is stopped" "$T/stopped.txt"
kill -CONT "$SV"
wait_for 5 "the server continued" is_state "$SV" S

# ---- 4. the server held in a ptrace stop by another process ------------
cat >"$T/tracer.py" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207
pid = int(sys.argv[1])
if libc.ptrace(PTRACE_SEIZE, pid, None, None) or libc.ptrace(PTRACE_INTERRUPT, pid, None, None):
    sys.exit("ptrace: %s" % os.strerror(ctypes.get_errno()))
os.waitpid(pid, 0x40000000)     # __WALL: the stop
print("HOLDING=1", flush=True)
time.sleep(120)                 # holds it stopped
PY
bg tracer $PY "$T/tracer.py" "$SV"
TP=$BG
wait_for 5 "the tracer holds the server" grep -q '^HOLDING=1' "$T/tracer.out"
[ "$(tracer_of "$SV")" = "$TP" ] || fail "4: TracerPid of $SV is '$(tracer_of "$SV")', not $TP" "/proc/$SV/status"
[ "$(state "$SV")" = t ] || fail "4: the server is in state '$(state "$SV")', not t (tracing stop)"
sleep 1
save_diagnose traced "$CL"
SV=$SV TP=$TP check traced '
need(c and c[0]["pid"] == int(E["SV"]), "the culprit is still the server %s" % E["SV"])
need(c[0]["live"].get("stopped") == "ptrace" and c[0]["live"].get("tracer") == int(E["TP"]),
     "the server is held in a ptrace stop by %s: %s" % (E["TP"], c[0]["live"]))
need(len(c) >= 2 and c[1]["pid"] == int(E["TP"]), "the tracer %s is the next entry" % E["TP"])
need(c[1]["rule"] == "tracer", "rule tracer, not %s" % c[1]["rule"])
need(c[1]["live"] == {"source": "tracer"}, "live source tracer, not %s" % c[1]["live"])
'
kill -KILL "$TP" "$CL" "$SV" "$SH" 2>/dev/null
wait "$TP" "$CL" "$SV" "$SH" 2>/dev/null
pass "live sources named: the child of a wait4 (children), a loopback TCP server (tcp-peer), its SIGSTOP and its ptrace stop by another tracer (tracer)"
