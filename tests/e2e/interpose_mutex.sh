#!/bin/bash
# e2e: the interposer, end to end (issue 14, docs/interposer.md).
# tests/apps/mutex_pipe under LD_PRELOAD=libargus-interpose.so and a
# private collector: the UI (main) thread blocks ~3 s on a pthread mutex
# that a worker holds while it reads a pipe, which a separate process (the
# writer) fills after 3 s.  Ground truth: the tids and the mutex address
# the app prints.  Asserts:
#   - argusd took the registration and its records, none invalid;
#   - the saved trace has the UI's mutex_wait on MUTEX_ADDR naming the
#     worker as holder, its mutex_acquired, and the worker's mutex_wake;
#   - the graph has a holder edge;
#   - `argus diagnose --pid PID --json`: culprit = the worker, rule
#     mutex-holder, and the chain goes on to the writer process;
#   - records written just before the app is SIGKILLed are in the trace;
#   - with the interposer and no collector the app runs normally.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
LIB=$BUILD/lib/libargus-interpose.so
[ -f "$LIB" ] || fail "no $LIB (build first)"

# -- no collector: the app runs normally (nothing listens in that dir)
mkdir -p "$T/nocollector"
ARGUS_RUN_DIR=$T/nocollector LD_PRELOAD=$LIB timeout 20 "$APPS/mutex_pipe" 400 >"$T/nc.out" 2>"$T/nc.err" ||
	fail "mutex_pipe under the interposer without a collector failed" "$T/nc.err"
w=$(kv WAITED_MS "$T/nc.out")
[ "$w" -ge 300 ] && [ "$w" -lt 5000 ] || fail "without a collector the UI waited $w ms (expected ~400)" "$T/nc.out"
log "no collector: the app ran normally (the UI waited $w ms for the worker)"

mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 256M --no-watch-interactive
LD_PRELOAD=$LIB timeout 30 "$APPS/mutex_pipe" 3000 >"$T/mp.out" 2>"$T/mp.err" ||
	fail "mutex_pipe under the interposer failed" "$T/mp.err"
OUT=$T/mp.out
export PID=$(kv PID) UI=$(kv UI_TID) WORKER=$(kv WORKER_TID) WRITER=$(kv WRITER_PID) MUTEX=$(kv MUTEX_ADDR)
log "app $PID: UI $UI waited $(kv WAITED_MS) ms for worker $WORKER; writer process $WRITER; mutex $MUTEX"

# -- crash: the UI's last records are written right before a SIGKILL
LD_PRELOAD=$LIB timeout 30 "$APPS/mutex_pipe" 300 kill >"$T/kill.out" 2>"$T/kill.err"
rc=$?
[ $rc -eq 137 ] || fail "mutex_pipe ... kill should die of SIGKILL (137), exited $rc" "$T/kill.err"
export KPID=$(kv PID "$T/kill.out") KUI=$(kv UI_TID "$T/kill.out")

sleep 0.3
"$ARGUS" status --raw >"$T/status" 2>&1 || fail "argus status failed" "$T/status"
st() { sed -n "s/^$1=//p" "$T/status"; }
log "argusd: interpose procs $(st interpose_procs), registered $(st interpose_registered), records $(st interpose_records), invalid $(st interpose_invalid), lost $(st interpose_lost)"
[ "$(st interpose)" = on ] || fail "argusd's interposer socket is off" "$T/status"
[ "$(st interpose_registered)" -ge 2 ] || fail "argusd took fewer than 2 registrations" "$T/status"
[ "$(st interpose_records)" -ge 6 ] || fail "argusd took fewer than 6 mutex records" "$T/status"
[ "$(st interpose_invalid)" = 0 ] || fail "true records were rejected as invalid" "$T/status"
[ "$(stat -c %a "$ARGUS_RUN_DIR/interpose.sock")" = 666 ] || fail "interpose.sock is not world-connectable"
[ "$(stat -c %a "$ARGUS_RUN_DIR/argusd.sock")" = 600 ] || fail "argusd.sock is no longer 0600"

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump"
check_dump "$T/s.dump" '
PID, UI, W, KPID, KUI = (int(ENV[k]) for k in ("PID", "UI", "WORKER", "KPID", "KUI"))
M = num(ENV["MUTEX"])
bad = 0
mx = {}
for e in ev:
	if e["type"].startswith("mutex_"):
		mx.setdefault(e["type"], []).append(e)
w = [e for e in mx.get("mutex_wait", []) if e["tid"] == UI and e["pid"] == PID and e.get("mutex") == M and e.get("holder", -1) == W]
a = [e for e in mx.get("mutex_acquired", []) if e["tid"] == UI and e.get("mutex") == M and e.get("err") == 0]
k = [e for e in mx.get("mutex_wake", []) if e["tid"] == W and e.get("mutex") == M]
if not w:
	say("FAIL: no mutex_wait of the UI (%d) on %s naming the worker %d" % (UI, ENV["MUTEX"], W)); show(mx.get("mutex_wait", [])); bad = 1
else:
	say("ok: " + w[0]["line"])
if not a:
	say("FAIL: no mutex_acquired of the UI (%d)" % UI); bad = 1
elif w and a[-1]["ts"] - w[0]["ts"] < 2500000000:
	say("FAIL: the UI waited only %.3f s between its records" % ((a[-1]["ts"] - w[0]["ts"]) / 1e9)); bad = 1
elif w:
	say("ok: acquired %.3f s later: %s" % ((a[-1]["ts"] - w[0]["ts"]) / 1e9, a[-1]["line"]))
if not k:
	say("FAIL: no mutex_wake of the worker (%d) on the mutex" % W); bad = 1
else:
	say("ok: " + k[0]["line"])
kill = [e for e in mx.get("mutex_acquired", []) if e["pid"] == KPID and e["tid"] == KUI]
if not kill:
	say("FAIL: the killed app (%d) has no mutex_acquired in the trace" % KPID); bad = 1
else:
	say("ok: written just before its SIGKILL: " + kill[-1]["line"])
sys.exit(bad)
' || fail "the interposer's records are missing or wrong in the trace (see above)"

"$ARGUS" graph "$T/s.argus" >"$T/graph.txt" 2>&1 || fail "argus graph failed" "$T/graph.txt"
grep -qE '^ +holder +[1-9]' "$T/graph.txt" || fail "the graph has no holder edge" "$T/graph.txt"

"$ARGUS" diagnose "$T/s.argus" --pid "$PID" --json >"$T/d.json" 2>"$T/d.err" ||
	fail "argus diagnose --pid $PID --json failed" "$T/d.err"
"$ARGUS" diagnose "$T/s.argus" --pid "$PID" 2>&1 | sed 's/^/    /' | head -n 12
/usr/bin/python3 - "$T/d.json" <<'PY' || fail "the diagnosis does not name the mutex holder (see above)" "$T/d.json"
import json, os, sys
d = json.load(open(sys.argv[1]))
pid, ui, worker, writer = (int(os.environ[k]) for k in ("PID", "UI", "WORKER", "WRITER"))
bad = 0
def check(ok, msg):
    global bad
    print(("  ok:   " if ok else "  FAIL: ") + msg, file=sys.stderr)
    bad |= not ok
h = d.get("hang") or {}
check(h.get("tid") == ui, f"the hang is the UI thread's: {h.get('tid')} == {ui}")
c = d.get("culprit") or {}
check(c.get("tid") == worker and c.get("pid") == pid, f"culprit tid {c.get('tid')} == the worker {worker}")
check(c.get("rule") == "mutex-holder", f"culprit rule {c.get('rule')!r} == 'mutex-holder'")
check((c.get("wait") or {}).get("syscall") == "read", f"the worker was blocked in read: {c.get('wait')}")
chain = d.get("chain") or []
check(bool(chain) and chain[0].get("pid") == writer,
      f"the chain goes on to the writer process {writer}: {[(x.get('pid'), x.get('rule')) for x in chain]}")
sys.exit(bad)
PY
pass "interposer: the UI's mutex wait names the worker (mutex-holder), the chain reaches the writer; crash-time records kept; no collector, no change"
