#!/bin/bash
# e2e: the trace records file locks with the file's identity, and graphlib
# names the holder from the trace alone.  Real programs from Debian:
#   - util-linux flock: a holder (`flock L sleep`), a try (`flock -n L`,
#     refused) and a timed waiter (`flock -w 1 L`, blocked, then EINTR);
#   - sqlite3: one session in BEGIN EXCLUSIVE, another whose busy handler
#     (.timeout) retries fcntl(F_SETLK) and sleeps between tries.
# Ground truth, independent of Argus: /proc/locks read by the driver while
# each lock was held (the holder's pid, the waiter's "->" line, and the
# file's MAJOR:MINOR:INODE), and the pids the driver started.  Asserts:
#   - the dump has the holder's successful exclusive lock and the waiters'
#     refused attempts (flock: -EWOULDBLOCK, and -ERESTARTSYS for the
#     wait its alarm cut; sqlite: -EAGAIN or
#     -EACCES, several, with sleeps between: a retry loop), all on the one
#     file object that /proc/locks's dev:inode gives (s_dev << 32 ^ ino);
#   - the decoded request of each entry (lock=KIND:OP:wait|try);
#   - lock_query (argus_diag__lock_blocker/holder on the recorded trace)
#     names, for every refused attempt, the pid /proc/locks showed holding.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

command -v flock >/dev/null || fail "no flock(1) (util-linux): run scripts/install-deps.sh"
command -v sqlite3 >/dev/null || fail "no sqlite3: run scripts/install-deps.sh"
LQ=$BUILD/bin/lock_query
[ -x "$LQ" ] || fail "no $LQ (build first)"

D=$T/locks
mkdir -p "$D"
cat >"$T/driver.sh" <<'EOF'
#!/bin/bash
# Runs under `argus record`; prints KEY=VALUE ground truth.
set -u
cd "$1" || exit 1
# /proc/locks lines on FILE's inode (dev:ino are the 6th field)
locks_of() { local ino; ino=$(stat -c %i "$1"); grep -E " [0-9a-f]+:[0-9a-f]+:$ino " /proc/locks; }
# until /proc/locks shows a held (not "->") TYPE WRITE lock of PID on FILE
wait_held() {
	for _ in $(seq 250); do
		locks_of "$1" | grep -v -- '->' | grep -qE "$2 +ADVISORY +WRITE +$3 " && return 0
		sleep 0.02
	done
	return 1
}
# until /proc/locks shows PID queued ("->") on FILE
wait_queued() {
	for _ in $(seq 250); do
		locks_of "$1" | grep -qE -- "-> +[A-Z]+ +ADVISORY +WRITE +$2 " && return 0
		sleep 0.02
	done
	return 1
}

: >L
flock L sleep 2.5 &
FH=$!
echo FLOCK_HOLDER=$FH
wait_held L FLOCK $FH || echo FLOCK_NOT_HELD=1
locks_of L | sed 's/^/FLOCK_PROC_LOCKS=/'
flock -n L true &
FN=$!
wait $FN
echo FLOCK_NB=$FN FLOCK_NB_RC=$?
flock -w 1 L true &
FW=$!
echo FLOCK_W=$FW
wait_queued L $FW || echo FLOCK_W_NOT_QUEUED=1
locks_of L | sed 's/^/FLOCK_PROC_LOCKS_W=/'
wait $FW
echo FLOCK_W_RC=$?
wait $FH

sqlite3 db "CREATE TABLE t(x);" || echo SQL_CREATE_FAILED=1
(echo "BEGIN EXCLUSIVE;"; sleep 2.5; echo "COMMIT;") | sqlite3 db &
SH=$!
echo SQL_HOLDER=$SH
wait_held db POSIX $SH || echo SQL_NOT_HELD=1
locks_of db | sed 's/^/SQL_PROC_LOCKS=/'
sqlite3 -cmd ".timeout 1000" db "INSERT INTO t VALUES(1);" 2>/dev/null &
SW=$!
wait $SW
echo SQL_WAITER=$SW SQL_WAITER_RC=$?
wait $SH
echo DONE=1
EOF

record lk -- bash "$T/driver.sh" "$D"
log "driver: $(tr '\n' ' ' <"$OUT")"
for bad in FLOCK_NOT_HELD FLOCK_W_NOT_QUEUED SQL_NOT_HELD SQL_CREATE_FAILED; do
	grep -q "^$bad=" "$OUT" && fail "the driver's setup failed ($bad): see its output" "$OUT"
done
kv DONE >/dev/null
export FH=$(kv FLOCK_HOLDER) FN=$(sed -n 's/^FLOCK_NB=\([0-9]*\) .*/\1/p' "$OUT") \
       FN_RC=$(sed -n 's/.*FLOCK_NB_RC=//p' "$OUT") FW=$(kv FLOCK_W) FW_RC=$(kv FLOCK_W_RC) \
       SH=$(kv SQL_HOLDER) SW=$(sed -n 's/^SQL_WAITER=\([0-9]*\) .*/\1/p' "$OUT")
[ "$FN_RC" = 1 ] || fail "flock -n should have been refused (exit 1), exited $FN_RC" "$OUT"
[ "$FW_RC" = 1 ] || fail "flock -w 1 should have timed out (exit 1), exited $FW_RC" "$OUT"

# Ground truth from /proc/locks: the holder pid and the file object of each
# file.  "1: FLOCK  ADVISORY  WRITE 3889 fe:00:1234 0 EOF"
proc_truth() { # KEY TYPE -> "PID OBJ" of the held lock lines (one distinct pair expected)
	python3 -c '
import re, sys
key, typ = sys.argv[2], sys.argv[3]
pat = re.compile(re.escape(key) + r"=\d+: (->)?\s*(\w+)\s+\w+\s+(\w+)\s+(-?\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s")
for l in open(sys.argv[1]):
	m = pat.match(l)
	if not m or m.group(1) or m.group(2) != typ:
		continue
	print("%d %#x" % (int(m.group(4)), ((int(m.group(5), 16) << 20 | int(m.group(6), 16)) << 32) ^ int(m.group(7))))
' "$OUT" "$1" "$2" | sort -u
}
read -r FH_PROC FLOBJ <<<"$(proc_truth FLOCK_PROC_LOCKS FLOCK)"
read -r SH_PROC SQLOBJ <<<"$(proc_truth SQL_PROC_LOCKS POSIX)"
[ "$(proc_truth FLOCK_PROC_LOCKS FLOCK | wc -l)" = 1 ] && [ "$(proc_truth SQL_PROC_LOCKS POSIX | wc -l)" = 1 ] ||
	fail "/proc/locks should show one holder per file" "$OUT"
grep -qE "^FLOCK_PROC_LOCKS_W=.*-> +FLOCK +ADVISORY +WRITE +$FW " "$OUT" ||
	fail "/proc/locks never showed flock -w ($FW) queued behind the lock" "$OUT"
export FH_PROC FLOBJ SH_PROC SQLOBJ
log "/proc/locks: flock held by $FH_PROC on $FLOBJ (driver started $FH); sqlite db held by $SH_PROC on $SQLOBJ (started $SH)"
[ "$FH_PROC" = "$FH" ] || fail "/proc/locks names $FH_PROC as the flock holder, the driver started $FH" "$OUT"
[ "$SH_PROC" = "$SH" ] || fail "/proc/locks names $SH_PROC as the sqlite holder, the driver started $SH" "$OUT"

dump_to "$TRACE" "$T/lk.dump"
check_dump "$T/lk.dump" '
want = {"flock": num(ENV["FLOBJ"]), "sqlite": num(ENV["SQLOBJ"])}
FH, FN, FW, SH, SW = (int(ENV[k]) for k in ("FH", "FN", "FW", "SH", "SW"))
bad = 0
# pair each sys_exit of flock/fcntl with its thread\x27s entry
enter, calls = {}, []
for e in ev:
	if e.get("sys", "") not in ("flock", "fcntl"):
		continue
	if e["type"] == "sys_enter":
		enter[e["tid"]] = e; continue
	if e["type"] != "sys_exit":
		continue
	i = enter.pop(e["tid"], None)
	if not (i and i["sys"] == e["sys"] and "lock" in i):
		continue
	lk = i["lock"]
	calls.append({"pid": e["pid"], "kind": lk["kind"], "op": lk["op"], "mode": "wait" if lk["wait"] else "try",
		      "ret": e["ret"], "obj": e.get("obj", 0), "okind": e.get("okind", ""), "in": i, "out": e})
def want_calls(what, pid, kind, op, mode, rets, obj, mn):
	global bad
	c = [x for x in calls if x["pid"] == pid and x["kind"] == kind and x["op"] == op and x["mode"] == mode]
	c = [x for x in c if x["ret"] in rets]
	on = [x for x in c if x["okind"] == "file" and x["obj"] == obj]
	if len(on) < mn:
		say("FAIL: %s: want >= %d %s:%s:%s lock calls of pid %d returning %s on file object %s; got %d (%d on any object). Its lock calls:" %
		    (what, mn, kind, op, mode, pid, "|".join(str(r) for r in rets), h(obj), len(on), len(c)))
		show(y for x in calls if x["pid"] == pid for y in (x["in"], x["out"]))
		bad = 1
		return []
	say("ok: %s: %d call(s), e.g.\n    %s\n    %s" % (what, len(on), on[0]["in"]["line"], on[0]["out"]["line"]))
	return on
want_calls("flock holder takes it", FH, "flock", "exclusive", "wait", [0], want["flock"], 1)
want_calls("flock -n is refused", FN, "flock", "exclusive", "try", [-11], want["flock"], 1)
# cut by its SIGALRM: sys_exit sees -ERESTARTSYS (-512), which becomes
# EINTR only on the way out to user space (signal delivery)
want_calls("flock -w waits, then its alarm cuts it", FW, "flock", "exclusive", "wait", [-512, -4], want["flock"], 1)
sw = [e for e in ev if e["type"] == "switch" and e["tid"] == FW and e.get("blocked", "") == "flock"]
if not [e for e in sw if e.get("okind", "") == "file" and e["obj"] == want["flock"]]:
	say("FAIL: flock -w (%d) has no switch blocked_in flock on the file object %s" % (FW, h(want["flock"])))
	show(sw); bad = 1
else:
	say("ok: flock -w blocked in flock on the file:\n    " + sw[0]["line"])
want_calls("sqlite holder: exclusive byte locks", SH, "posix", "exclusive", "try", [0], want["sqlite"], 1)
r = want_calls("sqlite busy loop: refused tries", SW, "posix", "shared", "try", [-11, -13], want["sqlite"], 2)
if len(r) >= 2:
	t0, t1 = r[0]["out"]["ts"], r[-1]["out"]["ts"]
	sl = [e for e in ev if e["type"] == "sys_exit" and e["pid"] == SW and "nanosleep" in e.get("sys", "") and t0 < e["ts"] < t1]
	if not sl:
		say("FAIL: no sleep of the sqlite waiter between its refused tries"); bad = 1
	else:
		say("ok: %d sleeps between its %d refused tries (a retry loop)" % (len(sl), len(r)))
sys.exit(bad)
' || fail "the lock records are missing or wrong (see above)"

# graphlib on the trace alone, against the holders /proc/locks showed
lq() { # PID WHAT EXPECTED-HOLDER RETS-REGEX MIN
	local out=$T/lq.$1
	timeout 60 "$LQ" "$TRACE" "$1" >"$out" 2>&1 || fail "lock_query $TRACE $1 failed" "$out"
	local att
	att=$(grep -E " ret=($4) " "$out" || true)
	[ "$(printf '%s' "$att" | grep -c .)" -ge "$5" ] || fail "$2: lock_query lists fewer than $5 attempts with ret $4" "$out"
	printf '%s\n' "$att" | grep -v " blocker=$3 holder=$3\$" >"$out.wrong"
	[ -s "$out.wrong" ] && fail "$2: not every refused attempt names $3 (the holder in /proc/locks)" "$out.wrong"
	log "ok: $2: $(printf '%s\n' "$att" | wc -l) attempt(s) name $3, e.g. $(printf '%s\n' "$att" | head -n 1)"
}
lq "$FN" "flock -n" "$FH_PROC" "-11" 1
lq "$FW" "flock -w" "$FH_PROC" "-512|-4" 1
lq "$SW" "sqlite busy loop" "$SH_PROC" "-11|-13" 2
pass "flock and sqlite lock attempts recorded on the /proc/locks file; the trace names the holders /proc/locks showed"
