#!/bin/bash
# e2e: a real GLib program nobody here wrote runs under the interposer and
# its GLib sources show up as work items (issue 14, docs/interposer.md
# "GLib").  python3-gi (PyGObject, Debian's): a producer thread calls
# GLib.idle_add() N times while the main thread runs GLib.MainLoop; each
# callback counts itself, and the program prints how many ran.
# PyGObject finds g_idle_add_full through girepository's g_module_symbol
# (a dlsym on GLib's own handle, which no preload sees): the interposer
# answers that lookup, so this also checks that path.  Asserts:
#   - with the interposer and no collector the program runs normally;
#   - under a private collector: exactly RAN idle items enqueued by the
#     producer thread and RAN begun and ended on the main thread, no
#     record rejected, and workitem edges in the graph (enqueue on one
#     thread, dispatch on another).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
LIB=$BUILD/lib/libargus-interpose.so
[ -f "$LIB" ] || fail "no $LIB (build first)"
/usr/bin/python3 -c 'from gi.repository import GLib' 2>/dev/null ||
	fail "python3-gi is not installed (scripts/install-deps.sh installs it)"
N=40
cat >"$T/idle.py" <<'PY'
import os, sys, threading, time
from gi.repository import GLib
n = int(sys.argv[1])
ran = 0
loop = GLib.MainLoop()
def cb(i):
    global ran
    ran += 1
    if ran == n:
        loop.quit()
    return False
def producer():
    print("PRODUCER_TID=%d" % threading.get_native_id(), flush=True)
    for i in range(n):
        GLib.idle_add(cb, i)
        time.sleep(0.01)
t = threading.Thread(target=producer)
t.start()
loop.run()
t.join()
print("PID=%d\nMAIN_TID=%d\nRAN=%d" % (os.getpid(), threading.get_native_id(), ran))
PY

mkdir -p "$T/nocollector"
ARGUS_RUN_DIR=$T/nocollector LD_PRELOAD=$LIB timeout 30 /usr/bin/python3 "$T/idle.py" $N >"$T/nc.out" 2>"$T/nc.err" ||
	fail "python3-gi under the interposer without a collector failed" "$T/nc.err"
[ "$(kv RAN "$T/nc.out")" = $N ] || fail "without a collector the program ran the wrong number of callbacks" "$T/nc.out"
log "no collector: $N idle callbacks ran"

mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 256M --no-watch-interactive
LD_PRELOAD=$LIB timeout 30 /usr/bin/python3 "$T/idle.py" $N >"$T/py.out" 2>"$T/py.err" ||
	fail "python3-gi under the interposer failed" "$T/py.err"
OUT=$T/py.out
export PID=$(kv PID) MAIN=$(kv MAIN_TID) PROD=$(kv PRODUCER_TID) RAN=$(kv RAN)
log "python3 $PID: main $MAIN ran $RAN idle callbacks added by thread $PROD"
sleep 0.3
"$ARGUS" status --raw >"$T/status" 2>&1 || fail "argus status failed" "$T/status"
[ "$(sed -n 's/^interpose_invalid=//p' "$T/status")" = 0 ] || fail "true records were rejected as invalid" "$T/status"

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump" --pid "$PID"
check_dump "$T/s.dump" '
PID, M, P, R = (int(ENV[k]) for k in ("PID", "MAIN", "PROD", "RAN"))
idle = [e for e in ev if e["type"].startswith("work_") and e["pid"] == PID and e.get("kind") == "idle"]
n = {"enq": 0, "beg": 0, "end": 0}
enq_items, beg_items = set(), set()
for e in idle:
	if e["type"] == "work_enqueue" and e["tid"] == P:
		n["enq"] += 1; enq_items.add(e["item"])
	if e["type"] == "work_begin" and e["tid"] == M:
		n["beg"] += 1; beg_items.add(e["item"])
	if e["type"] == "work_end" and e["tid"] == M:
		n["end"] += 1
bad = 0
for k in ("enq", "beg", "end"):
	if n[k] != R:
		say("FAIL: %d idle work_%s records, the program ran %d callbacks" % (n[k], k, R)); bad = 1
	else:
		say("ok: %d idle work_%s records (%s)" % (n[k], k, "producer thread" if k == "enq" else "main thread"))
unmatched = beg_items - enq_items
if unmatched:
	say("FAIL: dispatched items never enqueued: " + " ".join(h(i) for i in unmatched)); bad = 1
sys.exit(bad)
' || fail "the idle callbacks are not in the trace as work items (see above)"

"$ARGUS" graph "$T/s.argus" >"$T/graph.txt" 2>&1 || fail "argus graph failed" "$T/graph.txt"
e=$(awk '$1 == "workitem" { print $2 }' "$T/graph.txt")
[ "${e:-0}" -ge "$RAN" ] || fail "the graph has ${e:-0} workitem edges, expected >= $RAN" "$T/graph.txt"
pass "python3-gi: $RAN GLib.idle_add callbacks from another thread are $RAN work items ($e workitem edges); runs normally without a collector"
