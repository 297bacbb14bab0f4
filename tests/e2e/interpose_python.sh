#!/bin/bash
# e2e: the interposer on a program nobody here wrote: Debian's python3.11
# (/usr/bin/python3) under LD_PRELOAD=libargus-interpose.so.  CPython's
# threading.Lock is a POSIX semaphore (Python/thread_pthread.h,
# USE_SEMAPHORES: acquire = sem_trywait, then sem_wait with the GIL
# released; release = sem_post).  A holder thread takes the lock, sleeps
# 50 ms with it, releases it, N times; a waiter thread waits until the
# lock is held, tries acquire(blocking=False) and, when that fails,
# counts a blocked acquire and does a blocking acquire().  Python reports
# the count and both threads' kernel tids (threading.get_native_id).
# Asserts against that ground truth:
#   - the waiter's recorded blocking sem waits == Python's blocked count,
#     all on one sem_t, each acquired (err=0);
#   - the holder's recorded posts with a waiter on that sem_t == the same
#     count (each release had the waiter registered in glibc's nwaiters);
#   - argusd rejected none of python's records.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
LIB=$BUILD/lib/libargus-interpose.so
[ -f "$LIB" ] || fail "no $LIB (build first)"
PY=/usr/bin/python3
[ -x "$PY" ] || fail "no $PY (python3 is a dependency: scripts/install-deps.sh)"

cat >"$T/locks.py" <<'PY'
import os, sys, threading, time
N = int(sys.argv[1])
L = threading.Lock()
tids = {}
blocked = 0
done = threading.Event()

def holder():
    tids["holder"] = threading.get_native_id()
    for _ in range(N):
        L.acquire()
        time.sleep(0.05)            # hold it: the waiter blocks meanwhile
        L.release()
        time.sleep(0.03)
    time.sleep(0.15)                # stay until argusd has seen our records

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
        while L.locked():           # once per hold
            time.sleep(0.001)
    time.sleep(0.15)

h = threading.Thread(target=holder)
w = threading.Thread(target=waiter)
h.start(); w.start(); h.join(); w.join()
print(f"PID={os.getpid()}\nHOLDER_TID={tids['holder']}\nWAITER_TID={tids['waiter']}\nBLOCKED={blocked}")
PY

mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 256M --no-watch-interactive
LD_PRELOAD=$LIB timeout 60 "$PY" "$T/locks.py" 20 >"$T/py.out" 2>"$T/py.err" ||
	fail "python3 under the interposer failed" "$T/py.err"
OUT=$T/py.out
export PID=$(kv PID) HOLDER=$(kv HOLDER_TID) WAITER=$(kv WAITER_TID) BLOCKED=$(kv BLOCKED)
log "python3 $PID: waiter $WAITER reported $BLOCKED blocked acquires of the lock holder $HOLDER held"
[ "$BLOCKED" -ge 10 ] || fail "python reported only $BLOCKED blocked acquires of 20 (expected most)" "$OUT"

sleep 0.3
"$ARGUS" status --raw >"$T/status" 2>&1 || fail "argus status failed" "$T/status"
st() { sed -n "s/^$1=//p" "$T/status"; }
grep "^interpose_invalid\." "$T/status" | grep -v "=0$" | sed "s/^/    /"
[ "$(st interpose_invalid)" = 0 ] || fail "python's records were rejected as invalid" "$T/status"
"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump" --pid "$PID"
check_dump "$T/s.dump" '
pid, hl, w, n = (int(ENV[k]) for k in ("PID", "HOLDER", "WAITER", "BLOCKED"))
bad = 0
def want(ok, msg, s=()):
	global bad
	say(("ok: " if ok else "FAIL: ") + msg)
	if not ok:
		show(s); bad = 1
sem = [e for e in ev if e["pid"] == pid and e["type"].startswith("mutex_") and "sem" in e]
wait = [e for e in sem if e["tid"] == w and e["type"] == "mutex_wait"]
addr = {e["sem"] for e in wait}
want(len(wait) == n, "the waiter (%d): %d blocking sem waits recorded, python counted %d" % (w, len(wait), n), sem)
want(len(addr) == 1, "all on one sem_t: " + " ".join(h(a) for a in addr))
a = next(iter(addr)) if addr else None
acq = [e for e in sem if e["tid"] == w and e["type"] == "mutex_acquired" and e["sem"] == a and e.get("err") == 0]
want(len(acq) == n, "each acquired: %d" % len(acq))
post = [e for e in sem if e["tid"] == hl and e["type"] == "mutex_wake" and e["sem"] == a and e.get("waiters", 0) >= 1]
want(len(post) == n, "the holder (%d): %d releases (sem_post) with a waiter on it, python counted %d" % (hl, len(post), n), [e for e in sem if e["tid"] == hl])
sys.exit(bad)
' || fail "the interposer's semaphore records disagree with what python counted (see above)"
pass "python3's threading.Lock: $BLOCKED blocked acquires, as many recorded sem waits and posts with a waiter"
