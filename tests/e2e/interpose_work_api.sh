#!/bin/bash
# e2e: the argus_work_* API (interposer/argus_work.h), issue 14.
# tests/apps/work_api links libargus-interpose.so (no LD_PRELOAD) and
# tells Argus about its own mutex + condvar queue: the main thread
# enqueues 8 jobs and marks a boundary, a worker runs them back to back.
# Asserts, against the addresses the app prints:
#   - the trace has each job's work_enqueue (main thread) and work_begin,
#     work_end (worker), kind api, in order, and the work_boundary tag;
#   - `argus graph`: a workitem edge per job, and the worker's segments
#     cut at each job (segments starting with reason "work");
#   - with no collector the app runs normally.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
APP=$APPS/work_api
[ -x "$APP" ] || fail "no $APP (build first)"

mkdir -p "$T/nocollector"
ARGUS_RUN_DIR=$T/nocollector timeout 20 "$APP" >"$T/nc.out" 2>"$T/nc.err" ||
	fail "work_api without a collector failed" "$T/nc.err"
[ "$(kv DONE "$T/nc.out")" = "$(kv NJOBS "$T/nc.out")" ] || fail "without a collector not every job ran" "$T/nc.out"

mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 256M --no-watch-interactive
timeout 20 "$APP" >"$T/app.out" 2>"$T/app.err" || fail "work_api failed" "$T/app.err"
OUT=$T/app.out
export PID=$(kv PID) MAIN=$(kv MAIN_TID) WORKER=$(kv WORKER_TID) NJOBS=$(kv NJOBS) TAG=$(kv BOUNDARY_TAG)
export JOBS=$(for k in $(seq 0 $((NJOBS - 1))); do kv JOB$k; done | tr '\n' ' ')
log "app $PID: main $MAIN queued $NJOBS jobs to worker $WORKER"
sleep 0.3
"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump" --pid "$PID"
check_dump "$T/s.dump" '
PID, M, W = (int(ENV[k]) for k in ("PID", "MAIN", "WORKER"))
TAG = ENV["TAG"]
jobs = [num(j) for j in ENV["JOBS"].split()]
bad = 0
wk = [e for e in ev if e["type"].startswith("work_") and e["pid"] == PID]
for e in wk:
	e["item"] = e.get("item", e.get("tag", 0))
for k, job in enumerate(jobs):
	q = next((e for e in wk if e["type"] == "work_enqueue" and e["tid"] == M and e["item"] == job and e.get("kind") == "api"), None)
	b = next((e for e in wk if e["type"] == "work_begin" and e["tid"] == W and e["item"] == job), None)
	x = next((e for e in wk if e["type"] == "work_end" and e["tid"] == W and e["item"] == job), None)
	if not q or not b or not x:
		say("FAIL: job %d (%#x): enqueue %s begin %s end %s" % (k, job, "ok" if q else "missing", "ok" if b else "missing", "ok" if x else "missing")); bad = 1; continue
	if not (q["ts"] <= b["ts"] <= x["ts"]):
		say("FAIL: job %d out of order" % k); bad = 1; continue
if not bad:
	say("ok: every job enqueued by the main thread, begun and ended on the worker, in order")
t = next((e for e in wk if e["type"] == "work_boundary" and e["tid"] == M and e["item"] == num(TAG)), None)
if not t:
	say("FAIL: no work_boundary with the tag " + TAG); bad = 1
else:
	say("ok: " + t["line"])
sys.exit(bad)
' || fail "the API's records are missing or wrong (see above)"

"$ARGUS" graph "$T/s.argus" >"$T/graph.txt" 2>&1 || fail "argus graph failed" "$T/graph.txt"
e=$(awk '$1 == "workitem" { print $2 }' "$T/graph.txt")
[ "${e:-0}" -ge "$NJOBS" ] || fail "the graph has ${e:-0} workitem edges, expected >= $NJOBS" "$T/graph.txt"
"$ARGUS" graph "$T/s.argus" --tid "$WORKER" --json >"$T/w.json" 2>"$T/w.err" || fail "argus graph --tid --json failed" "$T/w.err"
/usr/bin/python3 - "$T/w.json" <<'PY' || fail "the worker's segments are not cut at its jobs" "$T/w.json"
import json, os, sys
d = json.load(open(sys.argv[1]))
n = int(os.environ["NJOBS"])
segs = [x for x in d["nodes"] if x["tid"] == int(os.environ["WORKER"])]
work = [x for x in segs if x["start_reason"] == "work"]
# each job's run is a segment that starts at its begin (and one more after the last end)
ok = len(work) >= n
print(("  ok:   " if ok else "  FAIL: ") + f"{len(work)} of the worker's {len(segs)} segments start at a job (>= {n})", file=sys.stderr)
sys.exit(not ok)
PY
pass "argus_work_* API: $NJOBS jobs enqueued, run and ended as recorded; $e workitem edges"
