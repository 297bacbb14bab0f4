#!/bin/bash
# e2e: the interposer's rwlocks, condition variables and semaphores
# (issue 14, docs/interposer.md).  tests/apps/sync_pipe under
# LD_PRELOAD=libargus-interpose.so and a private collector; in each mode
# the UI (main) thread waits for a peer thread that is blocked reading a
# pipe which a separate process (the writer) fills late.  Ground truth:
# the tids, addresses and wait times the app prints.  Asserts:
#   - rwlock: the UI's rdlock wait names the worker that write-holds it
#     (glibc's __cur_writer), the worker's write unlock with waiters is
#     recorded; `argus diagnose --pid`: culprit = the worker by rule
#     mutex-holder, chain on to the writer process;
#   - cond: every UI pthread_cond_wait is recorded with the condvar and
#     its mutex, every signal that had a waiter too; diagnose names the
#     signaller by rule cond-signaller, chain on to the writer -- after
#     the wait ended (the signal's holder edge) and while it is still
#     going on (a trace saved mid-hang: the condvar's last signaller);
#   - sem: the UI's blocking sem_wait and the poster's sem_post with one
#     waiter are recorded;
#   - compat: a program calling pthread_cond_wait/signal@GLIBC_2.2.5
#     (the old ABI) still works under the interposer, and none of its
#     compat calls is recorded (they reach glibc's compat code, not ours);
#   - argusd rejected none of these records;
#   - without a collector every mode runs normally under the library.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
LIB=$BUILD/lib/libargus-interpose.so
[ -f "$LIB" ] || fail "no $LIB (build first)"
APP=$APPS/sync_pipe

# -- no collector: every mode runs normally under the library (nothing
# listens in that dir, recording stays off, the wrappers call through)
mkdir -p "$T/nocollector"
for m in rwlock cond sem compat; do
	ARGUS_RUN_DIR=$T/nocollector LD_PRELOAD=$LIB timeout 20 "$APP" $m 300 >"$T/nc-$m.out" 2>"$T/nc-$m.err" ||
		fail "sync_pipe $m under the interposer without a collector failed" "$T/nc-$m.err"
	w=$(kv WAITED_MS "$T/nc-$m.out")
	[ "$w" -ge 250 ] && [ "$w" -lt 5000 ] ||
		fail "without a collector, $m: the UI waited $w ms (expected ~300)" "$T/nc-$m.out"
done
log "no collector: all four modes ran normally"

mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 256M --no-watch-interactive
for m in rwlock cond sem compat; do
	d=3000
	[ $m = sem ] && d=1000
	[ $m = compat ] && d=300
	LD_PRELOAD=$LIB timeout 30 "$APP" $m $d >"$T/$m.out" 2>"$T/$m.err" ||
		fail "sync_pipe $m under the interposer failed" "$T/$m.err"
	log "$m: pid $(kv PID "$T/$m.out"), UI $(kv UI_TID "$T/$m.out") waited $(kv WAITED_MS "$T/$m.out") ms for $(kv PEER_TID "$T/$m.out") in $(kv ROUNDS "$T/$m.out") waits"
done
w=$(kv WAITED_MS "$T/compat.out")
[ "$w" -ge 250 ] && [ "$(kv ROUNDS "$T/compat.out")" -ge 6 ] ||
	fail "the old-ABI condvar program did not wait for its signals (waited $w ms)" "$T/compat.out"

# -- a cond hang still going on when the trace is saved
LD_PRELOAD=$LIB timeout 30 "$APP" cond 9000 >"$T/live.out" 2>"$T/live.err" &
LIVE=$!
for _ in $(seq 100); do grep -q '^OBJ_ADDR=' "$T/live.out" 2>/dev/null && break; sleep 0.05; done
sleep 3
"$ARGUS" save -o "$T/live.argus" >"$T/save-live.out" 2>&1 || fail "argus save (mid-hang) failed" "$T/save-live.out"
wait $LIVE || fail "sync_pipe cond 9000 failed" "$T/live.err"

sleep 0.3
"$ARGUS" status --raw >"$T/status" 2>&1 || fail "argus status failed" "$T/status"
st() { sed -n "s/^$1=//p" "$T/status"; }
log "argusd: registered $(st interpose_registered), records $(st interpose_records), invalid $(st interpose_invalid), lost $(st interpose_lost)"
grep "^interpose_invalid\." "$T/status" | grep -v "=0$" | sed "s/^/    /"
[ "$(st interpose_invalid)" = 0 ] || fail "true records were rejected as invalid" "$T/status"

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
# one dump per app (the trace is system-wide: on a busy machine it holds
# millions of other events)
: >"$T/s.dump"
: >"$T/s.dump.json"
for m in rwlock cond sem compat; do
	for k in PID UI_TID PEER_TID OBJ_ADDR MUTEX_ADDR ROUNDS; do
		export "${m}_$k=$(kv $k "$T/$m.out")"
	done
	dump_to "$T/s.argus" "$T/s-$m.dump" --pid "$(kv PID "$T/$m.out")"
	cat "$T/s-$m.dump" >>"$T/s.dump"
	cat "$T/s-$m.dump.json" >>"$T/s.dump.json"
done
check_dump "$T/s.dump" '
bad = 0
def E(m, k):
	v = ENV["%s_%s" % (m, k)]
	return num(v) if "ADDR" in k else int(v)
def recs(m, typ, kind):
	return [e for e in ev if e["pid"] == E(m, "PID") and e["type"] == typ and e.get(kind) == E(m, "OBJ_ADDR")]
def want(ok, msg, s=()):
	global bad
	say(("ok: " if ok else "FAIL: ") + msg)
	if not ok:
		show(s); bad = 1
ui, peer = E("rwlock", "UI_TID"), E("rwlock", "PEER_TID")
w = [e for e in recs("rwlock", "mutex_wait", "rwlock") if e["tid"] == ui and e.get("mode") == "read" and e.get("holder") == peer]
want(len(w) == 1, "rwlock: one rdlock wait of the UI naming the writer %d" % peer + (": " + w[0]["line"] if w else ""), [e for e in ev if e["pid"] == E("rwlock", "PID")])
a = [e for e in recs("rwlock", "mutex_acquired", "rwlock") if e["tid"] == ui and e.get("mode") == "read" and e.get("err") == 0]
want(bool(a and w and a[0]["ts"] - w[0]["ts"] > 2.5e9), "rwlock: acquired " + ("%.2f s" % ((a[0]["ts"] - w[0]["ts"]) / 1e9) if a and w else "never") + " later")
u = [e for e in recs("rwlock", "mutex_wake", "rwlock") if e["tid"] == peer and e.get("mode") == "write"]
want(len(u) == 1, "rwlock: the writer\x27s unlock with a waiter" + (": " + u[0]["line"] if u else ""))

ui, peer = E("cond", "UI_TID"), E("cond", "PEER_TID")
mu = E("cond", "MUTEX_ADDR")
w = [e for e in recs("cond", "mutex_wait", "cond") if e["tid"] == ui and e.get("mutex") == mu]
want(len(w) == E("cond", "ROUNDS"), "cond: the UI\x27s %d waits, each with the mutex %s (%d records)" % (E("cond", "ROUNDS"), h(mu), len(w)))
a = [e for e in recs("cond", "mutex_acquired", "cond") if e["tid"] == ui and e.get("err") == 0]
want(len(a) == len(w), "cond: as many returns (%d)" % len(a))
s = [e for e in recs("cond", "mutex_wake", "cond") if e["tid"] == peer and e.get("waiters", 0) >= 1]
want(1 <= len(s) <= 6, "cond: the signaller\x27s signals with a waiter: %d (1..6)" % len(s))

ui, peer = E("sem", "UI_TID"), E("sem", "PEER_TID")
w = [e for e in recs("sem", "mutex_wait", "sem") if e["tid"] == ui]
a = [e for e in recs("sem", "mutex_acquired", "sem") if e["tid"] == ui and e.get("err") == 0]
s = [e for e in recs("sem", "mutex_wake", "sem") if e["tid"] == peer and e.get("waiters") == 1]
want(len(w) >= 1 and len(w) == len(a) and len(s) == len(w), "sem: %d blocking waits, %d acquisitions, %d posts to one waiter" % (len(w), len(a), len(s)))

# (its mutex is contended and recorded as such: only condvar records count)
c = [e for e in ev if e["pid"] == E("compat", "PID") and e["type"].startswith("mutex_") and "cond" in e]
want(not c, "compat: no record of the old-ABI condvar calls (%d)" % len(c), c)
sys.exit(bad)
' || fail "the interposer's records are missing or wrong in the trace (see above)"

"$ARGUS" graph "$T/s.argus" >"$T/graph.txt" 2>&1 || fail "argus graph failed" "$T/graph.txt"
grep -qE '^ +holder +[1-9]' "$T/graph.txt" || fail "the graph has no holder edge" "$T/graph.txt"

# diag TRACE MODE RULE: diagnose MODE's pid; culprit = its peer by RULE
diag() {
	local trace=$1 m=$2 rule=$3 out=$4 chain=$5
	"$ARGUS" diagnose "$trace" --pid "$(kv PID "$T/$out.out")" --json >"$T/d-$out.json" 2>"$T/d-$out.err" ||
		fail "argus diagnose --pid ($out) failed" "$T/d-$out.err"
	"$ARGUS" diagnose "$trace" --pid "$(kv PID "$T/$out.out")" 2>&1 | sed 's/^/    /' | head -n 8
	UI=$(kv UI_TID "$T/$out.out") PEER=$(kv PEER_TID "$T/$out.out") WRITER=$(kv WRITER_PID "$T/$out.out") \
	RULE=$rule CHAIN=$chain /usr/bin/python3 - "$T/d-$out.json" <<'PY' || fail "$out: the diagnosis does not name the $m's peer by $rule (see above)" "$T/d-$out.json"
import json, os, sys
d = json.load(open(sys.argv[1]))
ui, peer, writer = (int(os.environ[k]) for k in ("UI", "PEER", "WRITER"))
bad = 0
def check(ok, msg):
    global bad
    print(("  ok:   " if ok else "  FAIL: ") + msg, file=sys.stderr)
    bad |= not ok
check((d.get("hang") or {}).get("tid") == ui, f"the hang is the UI thread's ({ui})")
c = d.get("culprit") or {}
check(c.get("tid") == peer, f"culprit {c.get('tid')} == the peer thread {peer}")
check(c.get("rule") == os.environ["RULE"], f"rule {c.get('rule')!r} == {os.environ['RULE']!r}")
check((c.get("wait") or {}).get("syscall") == "read", f"the peer was blocked in read: {c.get('wait')}")
if os.environ["CHAIN"] == "1":
    chain = d.get("chain") or []
    check(bool(chain) and chain[0].get("pid") == writer,
          f"the chain goes on to the writer process {writer}: {[(x.get('pid'), x.get('rule')) for x in chain]}")
sys.exit(bad)
PY
}
diag "$T/s.argus" rwlock mutex-holder rwlock 1
diag "$T/s.argus" condvar cond-signaller cond 1
diag "$T/live.argus" condvar cond-signaller live 0
pass "interposer: rwlock waits name the writer, condvar waits their signaller (ended and mid-hang), semaphore waits/posts recorded, old-ABI condvars untouched"
