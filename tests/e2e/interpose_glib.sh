#!/bin/bash
# e2e: GLib work items under the interposer (issue 14, docs/interposer.md
# "GLib").  tests/apps/glib_pool (real GLib: a GMainLoop and a GThreadPool
# of one worker) under LD_PRELOAD=libargus-interpose.so and a private
# collector: the UI's idle callback pushes a slow item (it reads a pipe a
# separate process fills after 3 s) and then the item it wants, and waits
# in g_async_queue_pop for that one's result.  Ground truth: the tids and
# item addresses the app prints.  Asserts:
#   - the trace has the pool items' work_enqueue (the UI) and work_begin /
#     work_end (the worker, callback run_item symbolized by argus dump), in
#     that order, the main loop's own timeout/idle dispatches, and a
#     GTask's enqueue (the UI) and run (GLib's task thread, task_fn);
#   - the graph has workitem edges, and segments cut at work items;
#   - `argus diagnose --pid PID --json`: culprit = the worker, rule
#     queued-behind, the wanted item waited behind the slow item (the
#     addresses the app printed) which ran ~3 s on the worker, and the
#     chain goes on to the writer process;
#   - with the interposer and no collector the app runs normally.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
LIB=$BUILD/lib/libargus-interpose.so
[ -f "$LIB" ] || fail "no $LIB (build first)"
if [ ! -x "$APPS/glib_pool" ]; then
	log "SKIP: tests/apps/glib_pool was not built (no GLib headers: apt-get install libglib2.0-dev)"
	exit 77
fi

# -- no collector: the app runs normally (nothing listens in that dir)
mkdir -p "$T/nocollector"
ARGUS_RUN_DIR=$T/nocollector LD_PRELOAD=$LIB timeout 20 "$APPS/glib_pool" 400 >"$T/nc.out" 2>"$T/nc.err" ||
	fail "glib_pool under the interposer without a collector failed" "$T/nc.err"
w=$(kv WAITED_MS "$T/nc.out")
[ "$w" -ge 300 ] && [ "$w" -lt 5000 ] || fail "without a collector the UI waited $w ms (expected ~450)" "$T/nc.out"
[ "$(kv NORMAL_ROUNDS "$T/nc.out")" = 5 ] || fail "without a collector the app ran the wrong number of rounds" "$T/nc.out"
log "no collector: the app ran normally (the UI waited $w ms)"

mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 256M --no-watch-interactive
LD_PRELOAD=$LIB timeout 30 "$APPS/glib_pool" 3000 >"$T/gp.out" 2>"$T/gp.err" ||
	fail "glib_pool under the interposer failed" "$T/gp.err"
OUT=$T/gp.out
export PID=$(kv PID) UI=$(kv UI_TID) WORKER=$(kv WORKER_TID) WRITER=$(kv WRITER_PID) \
	SLOW=$(kv SLOW_ITEM) WANTED=$(kv WANTED_ITEM) ROUNDS=$(kv NORMAL_ROUNDS) \
	TASK=$(kv TASK) TASK_TID=$(kv TASK_TID)
[ "$(kv TASK_RESULT)" = 42 ] || fail "the GTask returned the wrong result under the interposer" "$OUT"
log "app $PID: UI $UI waited $(kv WAITED_MS) ms for item $WANTED behind $SLOW on worker $WORKER; writer $WRITER"

sleep 0.3
"$ARGUS" status --raw >"$T/status" 2>&1 || fail "argus status failed" "$T/status"
st() { sed -n "s/^$1=//p" "$T/status"; }
log "argusd: interpose records $(st interpose_records), invalid $(st interpose_invalid), lost $(st interpose_lost)"
[ "$(st interpose_invalid)" = 0 ] || fail "true records were rejected as invalid" "$T/status"

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump" --pid "$PID"
check_dump "$T/s.dump" '
PID, UI, W, R = (int(ENV[k]) for k in ("PID", "UI", "WORKER", "ROUNDS"))
S, X = num(ENV["SLOW"]), num(ENV["WANTED"])
bad = 0
wk = [e for e in ev if e["type"].startswith("work_") and e["pid"] == PID]
def calls(e, fn):
	return re.search(r"\b%s\b" % fn, e.get("fn_sym") or "") is not None
def one(what, m):
	global bad
	if not m:
		say("FAIL: no " + what); bad = 1; return None
	say("ok: %s: %s" % (what, m[0]["line"])); return m[0]
r = {}
for n, a in (("slow", S), ("wanted", X)):
	r[n] = {
		"enq": one("work_enqueue of the %s item by the UI" % n, [e for e in wk if e["type"] == "work_enqueue" and e["tid"] == UI and e["item"] == a and e["kind"] == "pool"]),
		"beg": one("work_begin of the %s item on the worker, callback run_item" % n, [e for e in wk if e["type"] == "work_begin" and e["tid"] == W and e["item"] == a and calls(e, "run_item")]),
		"end": one("work_end of the %s item on the worker" % n, [e for e in wk if e["type"] == "work_end" and e["tid"] == W and e["item"] == a]),
	}
if not bad:
	# the worker may begin the slow item before the UI queues the next
	pairs = ((r["slow"]["enq"], r["wanted"]["enq"]), (r["slow"]["enq"], r["slow"]["beg"]), (r["slow"]["beg"], r["slow"]["end"]),
		 (r["slow"]["end"], r["wanted"]["beg"]), (r["wanted"]["enq"], r["wanted"]["beg"]), (r["wanted"]["beg"], r["wanted"]["end"]))
	for p0, p1 in pairs:
		if p1["ts"] < p0["ts"]:
			say("FAIL: out of order: %s / %s" % (p0["line"], p1["line"])); bad = 1
	ran = (r["slow"]["end"]["ts"] - r["slow"]["beg"]["ts"]) / 1e9
	if ran < 2.5:
		say("FAIL: the slow item ran only %.3f s" % ran); bad = 1
	else:
		say("ok: the slow item ran %.3f s, the wanted one began after it" % ran)
tmo = [e for e in wk if e["type"] == "work_begin" and e["tid"] == UI and e["kind"] == "timeout" and calls(e, "ui_round")]
if len(tmo) != R:
	say("FAIL: %d dispatches of the ui_round timeout, the app ran %d" % (len(tmo), R)); bad = 1
else:
	say("ok: %d dispatches of the ui_round timeout on the UI thread" % R)
TK, TT = num(ENV["TASK"]), int(ENV["TASK_TID"])
te = one("work_enqueue of the GTask by the UI, task_fn", [e for e in wk if e["type"] == "work_enqueue" and e["tid"] == UI and e["item"] == TK and e["kind"] == "task" and calls(e, "task_fn")])
tb = one("work_begin of the GTask on the GLib task thread, task_fn", [e for e in wk if e["type"] == "work_begin" and e["tid"] == TT and e["item"] == TK and e["kind"] == "task" and calls(e, "task_fn")])
one("work_end of the GTask", [e for e in wk if e["type"] == "work_end" and e["tid"] == TT and e["item"] == TK and e["kind"] == "task"])
tp = [e for e in wk if e.get("item", 0) == TK and e.get("kind") != "task"]
if tp:
	say("FAIL: the GTask also recorded as another kind: " + tp[0]["line"]); bad = 1
if te and tb and tb["ts"] < te["ts"]:
	say("FAIL: the GTask began before its enqueue"); bad = 1
one("the ui_hang idle dispatch on the UI thread", [e for e in wk if e["type"] == "work_begin" and e["tid"] == UI and e["kind"] == "idle" and calls(e, "ui_hang")])
sys.exit(bad)
' || fail "the work-item records are missing or wrong in the trace (see above)"

"$ARGUS" graph "$T/s.argus" >"$T/graph.txt" 2>&1 || fail "argus graph failed" "$T/graph.txt"
grep -qE '^ +workitem +[1-9]' "$T/graph.txt" || fail "the graph has no workitem edge" "$T/graph.txt"

"$ARGUS" diagnose "$T/s.argus" --pid "$PID" --json >"$T/d.json" 2>"$T/d.err" ||
	fail "argus diagnose --pid $PID --json failed" "$T/d.err"
"$ARGUS" diagnose "$T/s.argus" --pid "$PID" 2>&1 | sed 's/^/    /' | head -n 16
/usr/bin/python3 - "$T/d.json" <<'PY' || fail "the diagnosis does not name the item queued ahead (see above)" "$T/d.json"
import json, os, sys
d = json.load(open(sys.argv[1]))
pid, ui, worker, writer = (int(os.environ[k]) for k in ("PID", "UI", "WORKER", "WRITER"))
slow, wanted = (int(os.environ[k], 16) for k in ("SLOW", "WANTED"))
bad = 0
def check(ok, msg):
    global bad
    print(("  ok:   " if ok else "  FAIL: ") + msg, file=sys.stderr)
    bad |= not ok
h = d.get("hang") or {}
check(h.get("tid") == ui, f"the hang is the UI thread's: {h.get('tid')} == {ui}")
c = d.get("culprit") or {}
check(c.get("tid") == worker and c.get("pid") == pid, f"culprit tid {c.get('tid')} == the worker {worker}")
check(c.get("rule") == "queued-behind", f"culprit rule {c.get('rule')!r} == 'queued-behind'")
wk = c.get("work") or {}
check(wk.get("item") == wanted, f"the item waited for {wk.get('item')} == WANTED_ITEM {wanted:#x}")
a = wk.get("ahead") or {}
check(a.get("item") == slow, f"the item ahead {a.get('item')} == SLOW_ITEM {slow:#x}")
check(a.get("tid") == worker, f"the item ahead ran on the worker: {a.get('tid')}")
check(a.get("ran_ns", 0) >= 2.5e9, f"the item ahead ran {a.get('ran_ns', 0) / 1e6:.0f} ms (>= 2500)")
check("run_item" in (a.get("callback") or ""), f"its callback is run_item: {a.get('callback')!r}")
check("behind" in d.get("verdict", ""), f"verdict: {d.get('verdict')!r}")
path = d.get("path") or []
check(len(path) >= 2 and path[0].get("tid") == ui and path[1].get("tid") == worker,
      f"the path starts at the UI, woken by the worker: {[(p.get('tid'), p.get('edge')) for p in path]}")
chain = d.get("chain") or []
check(bool(chain) and chain[0].get("pid") == writer,
      f"the chain goes on to the writer process {writer}: {[(x.get('pid'), x.get('rule')) for x in chain]}")
sys.exit(bad)
PY
pass "GLib: pool items, timeouts and idles recorded; the UI's wait names the worker and the slow item queued ahead (queued-behind), the chain reaches the writer"
