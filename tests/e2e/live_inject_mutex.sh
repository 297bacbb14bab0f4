#!/bin/bash
# e2e: `argus inject` into a running process makes its mutex waits
# recorded, as LD_PRELOAD from the start would have (issue 14 §3,
# interposer/live/live_bind.c).  tests/apps/mutex_pipe, started without
# the interposer, takes and drops its mutex once (so glibc's
# pthread_mutex_lock is bound in its GOT) and waits for a line on stdin;
# with a private collector:
#   - `argus inject --no-bind` into a twin: the library is loaded, nothing
#     rebound, and the twin's later mutex wait leaves no record;
#   - `argus inject` into the app: it says it rebound the lock calls (at
#     least lock and unlock), the GOT slot of pthread_mutex_lock in the
#     app's executable now holds the interposer's pthread_mutex_lock;
#   - then the app runs its hang (the UI blocks ~3 s on the mutex a worker
#     holds across a read of a pipe a child fills late) and exits 0;
#   - the saved trace has the UI's mutex_wait naming the worker as holder,
#     and `argus diagnose --pid --json` names the worker by rule
#     mutex-holder, with the chain on to the writer process;
#   - a program nobody here wrote: Debian's python3, already running (its
#     threading.Lock, a sem_t, used once), injected, then a holder and a
#     waiter thread: the waiter's recorded blocking sem waits equal the
#     blocked acquires python counts itself (as interpose_python.sh checks
#     under LD_PRELOAD).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/live_lib.sh"
LIB=$BUILD/lib/libargus-interpose.so
[ -f "$LIB" ] || fail "no $LIB (build first)"
mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 256M --no-watch-interactive

# -- the twin: loaded, not rebound: its wait is not recorded
live_start twin "$APPS/mutex_pipe" 400 wait
live_wait_line '^READY=1'
TWIN=$LPID
"$ARGUS" inject --pid "$TWIN" --no-bind >"$T/twin.inj" 2>"$T/twin.err" ||
	fail "argus inject --no-bind failed" "$T/twin.err"
grep -q "rebound" "$T/twin.inj" && fail "--no-bind rebound something" "$T/twin.inj"
live_send go
live_wait_line '^WAITED_MS=' 15
live_finish 0

# -- the app: loaded and rebound
live_start mp "$APPS/mutex_pipe" 3000 wait
live_wait_line '^READY=1'
OUT=$T/mp.out
APP=$LPID
"$ARGUS" inject --pid "$APP" >"$T/inject.out" 2>"$T/inject.err" ||
	fail "argus inject --pid $APP failed" "$T/inject.err"
log "$(cat "$T/inject.out")"
read -r slots fns < <(sed -n 's/.*rebound \([0-9]*\) call slots\? of \([0-9]*\) lock function.*/\1 \2/p' "$T/inject.out")
[ "${slots:-0}" -ge 2 ] && [ "${fns:-0}" -ge 2 ] ||
	fail "inject did not rebind lock and unlock (slots ${slots:-?}, functions ${fns:-?})" "$T/inject.out"
# the executable's GOT slot for pthread_mutex_lock: the wrapper's address
/usr/bin/python3 - "$APP" "$APPS/mutex_pipe" "$(readlink -f "$LIB")" <<'PY' || fail "the GOT slot of pthread_mutex_lock does not point at the interposer"
import subprocess, sys
pid, exe, lib = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def bias(path):
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        if len(f) >= 6 and f[5] == path and int(f[2], 16) == 0:
            return int(f[0].split("-")[0], 16)
    raise SystemExit("FAIL: %s not mapped" % path)
slot = None
for line in subprocess.check_output(["readelf", "-rW", exe], text=True).splitlines():
    f = line.split()
    if len(f) >= 5 and f[4].startswith("pthread_mutex_lock@"):
        slot = int(f[0], 16)
if slot is None:
    raise SystemExit("FAIL: no relocation of pthread_mutex_lock in " + exe)
sym = None
for line in subprocess.check_output(["readelf", "--dyn-syms", "-W", lib], text=True).splitlines():
    f = line.split()
    if len(f) >= 8 and f[7] == "pthread_mutex_lock" and f[6] != "UND":
        sym = int(f[1], 16)
with open("/proc/%d/mem" % pid, "rb") as m:
    m.seek(bias(exe) + slot)
    got = int.from_bytes(m.read(8), "little")
want = bias(lib) + sym
print(("  ok:   " if got == want else "  FAIL: ") +
      "GOT slot of pthread_mutex_lock = %#x, the interposer's = %#x" % (got, want), file=sys.stderr)
sys.exit(got != want)
PY
live_send go
live_wait_line '^WAITED_MS=' 15
live_finish 0
export PID=$(kv PID) UI=$(kv UI_TID) WORKER=$(kv WORKER_TID) WRITER=$(kv WRITER_PID) MUTEX=$(kv MUTEX_ADDR) TWIN
log "app $PID: UI $UI waited $(kv WAITED_MS) ms for worker $WORKER; writer $WRITER; mutex $MUTEX"

sleep 0.3
"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump"
check_dump "$T/s.dump" '
PID, UI, W, TWIN = (int(ENV[k]) for k in ("PID", "UI", "WORKER", "TWIN"))
M = num(ENV["MUTEX"])
bad = 0
w = [e for e in ev if e["type"] == "mutex_wait" and e["tid"] == UI and e.get("mutex") == M and e.get("holder") == W]
if not w:
	say("FAIL: no mutex_wait of the UI (%d) naming the worker %d" % (UI, W)); bad = 1
else:
	say("ok: " + w[0]["line"])
t = [e for e in ev if e["type"].startswith("mutex_") and e["pid"] == TWIN]
if t:
	say("FAIL: the --no-bind twin has mutex records"); show(t); bad = 1
else:
	say("ok: the --no-bind twin (%d) has no mutex record" % TWIN)
sys.exit(bad)
' || fail "the records after inject are missing or wrong (see above)"

"$ARGUS" diagnose "$T/s.argus" --pid "$PID" --json >"$T/d.json" 2>"$T/d.err" ||
	fail "argus diagnose --pid $PID --json failed" "$T/d.err"
/usr/bin/python3 - "$T/d.json" <<'PY' || fail "the diagnosis does not name the mutex holder (see above)" "$T/d.json"
import json, os, sys
d = json.load(open(sys.argv[1]))
pid, ui, worker, writer = (int(os.environ[k]) for k in ("PID", "UI", "WORKER", "WRITER"))
bad = 0
def check(ok, msg):
    global bad
    print(("  ok:   " if ok else "  FAIL: ") + msg, file=sys.stderr)
    bad |= not ok
c = d.get("culprit") or {}
check((d.get("hang") or {}).get("tid") == ui, "the hang is the UI thread's")
check(c.get("tid") == worker and c.get("rule") == "mutex-holder",
      f"culprit {c.get('tid')} by {c.get('rule')!r}: the worker {worker} by 'mutex-holder'")
chain = d.get("chain") or []
check(bool(chain) and chain[0].get("pid") == writer, f"the chain goes on to the writer {writer}")
sys.exit(bad)
PY
# -- python3, injected while it runs
cat >"$T/locks.py" <<'PY'
import os, sys, threading, time
N = int(sys.argv[1])
L = threading.Lock()
L.acquire(); L.release()            # sem_* bound in python's GOT
print(f"PID={os.getpid()}\nREADY=1", flush=True)
sys.stdin.readline()                # argus inject happens now
tids = {}
blocked = 0
def holder():
    tids["holder"] = threading.get_native_id()
    for _ in range(N):
        L.acquire(); time.sleep(0.05); L.release(); time.sleep(0.03)
    time.sleep(0.15)
def waiter():
    global blocked
    tids["waiter"] = threading.get_native_id()
    for _ in range(N):
        while not L.locked():
            time.sleep(0.001)
        if not L.acquire(blocking=False):
            blocked += 1
            L.acquire()
        L.release()
        while L.locked():
            time.sleep(0.001)
    time.sleep(0.15)
h = threading.Thread(target=holder); w = threading.Thread(target=waiter)
h.start(); w.start(); h.join(); w.join()
print(f"HOLDER_TID={tids['holder']}\nWAITER_TID={tids['waiter']}\nBLOCKED={blocked}", flush=True)
PY
live_start py /usr/bin/python3 "$T/locks.py" 20
live_wait_line '^READY=1'
OUT=$T/py.out
PYPID=$LPID
"$ARGUS" inject --pid "$PYPID" >"$T/py.inj" 2>"$T/py.injerr" || fail "argus inject into python3 failed" "$T/py.injerr"
log "python3: $(tail -n 1 "$T/py.inj")"
live_send go
live_wait_line '^BLOCKED=' 30
live_finish 0
export PYPID HOLDER=$(kv HOLDER_TID) WAITER=$(kv WAITER_TID) BLOCKED=$(kv BLOCKED)
[ "$BLOCKED" -ge 10 ] || fail "python reported only $BLOCKED blocked acquires of 20 (expected most)" "$OUT"
sleep 0.3
"$ARGUS" save -o "$T/p.argus" >"$T/psave.out" 2>&1 || fail "argus save failed" "$T/psave.out"
dump_to "$T/p.argus" "$T/p.dump" --pid "$PYPID"
check_dump "$T/p.dump" '
pid, w, n = (int(ENV[k]) for k in ("PYPID", "WAITER", "BLOCKED"))
wait = [e for e in ev if e["pid"] == pid and e["tid"] == w and e["type"] == "mutex_wait" and "sem" in e]
ok = len(wait) == n
say(("ok: " if ok else "FAIL: ") + "python3 waiter %d: %d blocking sem waits recorded after inject, python counted %d" % (w, len(wait), n))
sys.exit(0 if ok else 1)
' || fail "python's semaphore waits after inject disagree with its own count (see above)"
pass "inject rebinds the lock calls of running processes: mutex_pipe's wait names its holder; python3's $BLOCKED blocked acquires are recorded"
