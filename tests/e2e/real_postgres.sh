#!/bin/bash
# e2e (real programs): PostgreSQL 15, one session waiting on a row lock
# that another session holds.
#
#   server   postgres (initdb + pg_ctl as user postgres), data dir and unix
#            socket in the test's temp dir, listen_addresses='' (no TCP)
#   A        psql, fed from a FIFO: BEGIN; UPDATE t ... WHERE id=1;  then
#            idle in transaction until the harness writes COMMIT (HOLD s)
#   B        psql -c "UPDATE t ... WHERE id=1": its backend waits on A's
#            transaction lock; psql B itself waits in libpq's poll() for
#            the reply
#
# Ground truth, from the server's own views, queried by the harness during
# the wait: pg_stat_activity (the backend pid of each session, tagged by
# application_name) and pg_blocking_pids(B's backend) == {A's backend}.
# Expected: psql B is blamed on its backend, whose culprit is A's backend
# (the holder), whose culprit is A's psql (idle, the one that has to send
# COMMIT).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/real_lib.sh"
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/postgres" ] || fail "no $PGBIN/postgres (scripts/install-deps.sh installs postgresql-15)"
id postgres >/dev/null 2>&1 || fail "no user postgres (the postgresql-15 package creates it)"

# the server runs as postgres: it needs to reach its dirs inside $T
chmod 711 "$T"
mkdir -p "$T/pg" "$T/pgsock"
chown postgres: "$T/pg" "$T/pgsock"
runuser -u postgres -- "$PGBIN/initdb" -D "$T/pg" -U postgres --auth=trust --no-sync \
	>"$T/initdb.log" 2>&1 || fail "initdb failed" "$T/initdb.log"
REAL_CLEANUP+=("runuser -u postgres -- $PGBIN/pg_ctl -D $T/pg stop -m immediate -t 20")
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$T/pg" -l "$T/pgsock/server.log" -w -t 60 \
	-o "-c listen_addresses='' -c unix_socket_directories='$T/pgsock' -c fsync=off" \
	start >"$T/pg_ctl.log" 2>&1 || fail "pg_ctl start failed" "$T/pgsock/server.log"
PSQL="$PGBIN/psql -X -q -v ON_ERROR_STOP=1 -h $T/pgsock -U postgres -d postgres"
$PSQL -c "CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0);" \
	>"$T/schema.log" 2>&1 || fail "could not create the table" "$T/schema.log"
log "postgres $($PSQL -Atc 'show server_version') runs on $T/pgsock"

cat >"$T/harness.sh" <<SH
set -u
hold=\$1 g=\$2
PSQL="$PSQL"
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }
sql() { \$PSQL -Atc "\$1"; }
end=\$((SECONDS + 20))
rm -f "\$g.fifo"; mkfifo "\$g.fifo"
PGAPPNAME=argus_a \$PSQL <"\$g.fifo" >"\$g.a.out" 2>&1 &
A=\$!
echo "\$A" >>"\$g.pids"
exec 3>"\$g.fifo"
echo "BEGIN; UPDATE t SET v = v + 1 WHERE id = 1;" >&3
# A holds the row once its transaction sits idle after the UPDATE
until [ "\$(sql "SELECT state FROM pg_stat_activity WHERE application_name = 'argus_a'")" = "idle in transaction" ]; do
	[ \$SECONDS -lt \$end ] || { echo "harness: session A never took the row" >&2; exit 1; }
	sleep 0.05
done
BA=\$(sql "SELECT pid FROM pg_stat_activity WHERE application_name = 'argus_a'")
PGAPPNAME=argus_b \$PSQL -c "UPDATE t SET v = v + 1 WHERE id = 1" >"\$g.b.out" 2>&1 &
V=\$!
echo "\$V" >>"\$g.pids"
# B waits once the server says its backend is blocked by A's (pg_locks)
while :; do
	row=\$(sql "SELECT pid, pg_blocking_pids(pid) FROM pg_stat_activity WHERE application_name = 'argus_b' AND wait_event_type = 'Lock'")
	[ -n "\$row" ] && break
	[ \$SECONDS -lt \$end ] || { echo "harness: session B never waited on the lock" >&2; exit 1; }
	sleep 0.05
done
BB=\${row%%|*}
blockers=\${row#*|}
[ "\$blockers" = "{\$BA}" ] || { echo "harness: B's backend \$BB is blocked by \$blockers, not by A's \$BA" >&2; exit 1; }
{
	echo "VICTIM_PID=\$V"
	echo "CULPRIT_PID=\$BB"
	echo "CULPRIT_COMM=postgres"
	echo "CHAIN=\$BA,\$A"
	echo "PSQL_A=\$A BACKEND_A=\$BA BACKEND_B=\$BB PG_BLOCKING_PIDS=\$blockers"
	echo "PG_LOCKS=\$(sql "SELECT pid, locktype, mode, granted FROM pg_locks WHERE pid IN (\$BA, \$BB) AND locktype IN ('transactionid', 'tuple')" | paste -sd ' ')"
	echo "VICTIM_SYSCALL=\$(cut -d' ' -f1 /proc/\$V/syscall)"
	echo "IN_WAIT_NS=\$(mono)"
	echo "READY=1"
} >>"\$g"
sleep "\$hold"
echo "COMMIT;" >&3
exec 3>&-
wait "\$V" || { echo "harness: session B failed: \$(cat "\$g.b.out")" >&2; exit 1; }
echo "DONE_NS=\$(mono)" >>"\$g"
wait "\$A" || { echo "harness: session A failed: \$(cat "\$g.a.out")" >&2; exit 1; }
SH

real_run_harness postgres 3
real_check_diagnose "$TRACE" "$GT"
real_check_hangs "$TRACE" "$GT"
# psql A, idle in its transaction, reads its FIFO (a blocking read():
# argusd keeps it too); the victim is psql B
real_keeper 6 psql
# the same, argusd's save held until the hang is over (real_keeper held)
real_keeper 8 psql held
# In the live phases lldb's `argus diagnose` (live and --until-end) may use
# the built-in holder rule; the CLI's --until-end, at the same moment, runs
# without any (the issue's "--until-end alone"): the hang's real end names
# A's backend, no application knowledge needed
REAL_CLI_UNTIL_ARGS=--no-holder-rules
real_live 8 3
real_live 8 random

# The holder rule (docs/schema.md, "Holders only the application knows"):
# live, B's backend waits in ProcSleep for A's transaction, which only
# PostgreSQL's lock manager knows; the built-in rule runs argus-pg-holders
# (pg_blocking_pids) as the backend's uid, and the chain goes on from B's
# backend to A's.  pg_check_holder JSON GT HOW [SCHEMA]: the culprit is B's
# backend, the next entry A's backend by rule holder-rule, from the
# built-in rule (or SCHEMA's), run as postgres, answering A's backend.
cat >"$T/check_holder.py" <<'PY'
import json, sys
jfile, gfile, how = sys.argv[1], sys.argv[2], sys.argv[3]
schema = sys.argv[4] if len(sys.argv) > 4 else None
g = dict(l.rstrip("\n").split("=", 1) for l in open(gfile) if "=" in l)
extra = dict(kv.split("=", 1) for kv in g.get("PSQL_A", "").split() if "=" in kv)
ba, bb, pg_uid = int(extra["BACKEND_A"]), int(g["CULPRIT_PID"]), int(sys.argv[5])
bad = []
def check(c, msg):
    print(("  ok:   " if c else "  FAIL: ") + f"{how}: " + msg, file=sys.stderr)
    if not c:
        bad.append(msg)
try:
    d = json.load(open(jfile))
except Exception as e:
    print(f"  FAIL: {how}: no JSON: {e}", file=sys.stderr)
    sys.exit(1)
c = d.get("culprit") or {}
chain = d.get("chain") or []
check(c.get("pid") == bb, f"the culprit is B's backend {bb}: {c.get('pid')} ({c.get('rule')})")
nxt = chain[0] if chain else {}
check(nxt.get("pid") == ba and nxt.get("rule") == "holder-rule",
      f"then A's backend {ba} by holder-rule: {[(x.get('pid'), x.get('rule')) for x in chain]}")
check((nxt.get("live") or {}).get("source") == "holder-rule",
      f"its live source is holder-rule: {nxt.get('live')}")
h = nxt.get("holder_rule") or {}
want_rule = (schema + ":") if schema else "<built-in>:"
check(str(h.get("rule", "")).startswith(want_rule), f"named by rule {want_rule}N: {h.get('rule')}")
check(h.get("function") in ("ProcSleep", "XactLockTableWait"),
      f"whose function is on B's wait stack: {h.get('function')}")
check((h.get("waiter") or {}).get("pid") == bb, f"asked about B's backend: {h.get('waiter')}")
check(h.get("uid") == pg_uid and h.get("uid") != 0,
      f"its command ran as postgres (uid {pg_uid}), not root: uid {h.get('uid')}")
check(h.get("pids") == [ba], f"and answered A's backend: {h.get('pids')} ({h.get('argv')}, {h.get('ms')} ms)")
rules = d.get("holder_rules")
check(isinstance(rules, list) and any(x.get("state") == "answered" for x in rules),
      f"holder_rules lists it: {[(x.get('rule'), x.get('state'), x.get('why')) for x in rules or []]}")
print(f"  verdict: {d.get('verdict')}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
PG_UID=$(id -u postgres)
pg_check_holder() {
	local out
	out=$(/usr/bin/python3 "$T/check_holder.py" "$1" "$2" "$3" "${4:-}" "$PG_UID" 2>&1)
	local rc=$?
	printf '%s\n' "$out" >&2
	[ $rc -eq 0 ] || soft "$3: the chain does not reach A's backend through the holder rule: $(printf '%s\n' "$out" | sed -n 's/^  FAIL: //p' | paste -sd ';' | head -c 400)"
}
# the lldb phases: the JSON real_live left of `argus diagnose --json`
for i in "${!REAL_LIVE_CMDS[@]}"; do
	[ "${REAL_LIVE_CMDS[i]}" = "live:argus diagnose --json" ] || continue
	for ph in live_3s live_random; do
		[ -s "$T/$ph.$i.json" ] && pg_check_holder "$T/$ph.$i.json" "$T/$ph.gt" "lldb $ph"
	done
done

# the CLI's --until-end without holder rules: none ran, and no step of
# the chain came from one
for ph in live_3s live_random; do
	[ -s "$T/$ph.cli_until.json" ] || continue
	/usr/bin/python3 - "$T/$ph.cli_until.json" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
ran = d.get("holder_rules") or []
steps = [c for c in [d.get("culprit") or {}] + (d.get("chain") or []) if c.get("rule") == "holder-rule"]
if ran or steps:
    print(f"  FAIL: holder rules ran: {ran}; steps by holder-rule: {steps}", file=sys.stderr)
    sys.exit(1)
PY
		soft "$ph: argus diagnose --until-end --no-holder-rules still ran a holder rule"
done

# The plain CLI during a hang: `argus save --last 20s`, then `argus
# diagnose FILE --pid PSQL_B` (a trace of this system, just taken: live
# without --live), with the built-in rule and with a user's own rule
# for the same wait (psql run directly; it comes before the built-in).
cat >"$T/user.schema" <<SCHEMA
# our server: psql on its socket directory, no helper
holder ProcSleep process=postgres timeout 5000 run $PGBIN/psql -X -A -t -q -w -h $T/pgsock -d postgres -c SELECT(pg_blocking_pids(%p))
SCHEMA
g=$T/cli.gt
: >"$g"
bash "$T/harness.sh" 8 "$g" >"$T/cli.out" 2>"$T/cli.err" &
hp=$!
E2E_PIDS+=("$hp")
end=$((SECONDS + 30))
until grep -q '^READY=1' "$g"; do
	kill -0 "$hp" 2>/dev/null || fail "cli phase: the harness ended before the hang" "$T/cli.err"
	[ $SECONDS -lt $end ] || fail "cli phase: the harness never saw the hang in 30 s" "$g"
	sleep 0.1
done
sleep 2
v=$(gt VICTIM_PID "$g")
if ! "$ARGUS" save --last 20s -o "$T/cli.argus" >"$T/cli_save.out" 2>&1; then
	soft "cli phase: argus save --last 20s failed: $(head -n 1 "$T/cli_save.out")"
else
	"$ARGUS" diagnose "$T/cli.argus" --pid "$v" --json >"$T/cli.json" 2>"$T/cli_diag.err" ||
		soft "cli phase: argus diagnose --pid $v --json exited $?: $(head -n 1 "$T/cli_diag.err")"
	"$ARGUS" diagnose "$T/cli.argus" --pid "$v" >"$T/cli.txt" 2>&1 </dev/null
	"$ARGUS" diagnose "$T/cli.argus" --pid "$v" --json --schema "$T/user.schema" >"$T/cli_user.json" \
		2>"$T/cli_user.err" ||
		soft "cli phase: argus diagnose --schema user.schema exited $?: $(head -n 1 "$T/cli_user.err")"
	[ -z "$(gt DONE_NS "$g")" ] && kill -0 "$v" 2>/dev/null ||
		soft "cli phase: the hang ended before argus diagnose did (the phase tested nothing)"
	sed 's/^/    /' "$T/cli.txt" | head -n 30 >&2
	grep -q '^          holder rule <built-in>:[0-9]*: ' "$T/cli.txt" ||
		soft "cli phase: the text report has no 'holder rule <built-in>:N' line under A's backend"
	pg_check_holder "$T/cli.json" "$g" "cli"
	pg_check_holder "$T/cli_user.json" "$g" "cli --schema" "$T/user.schema"
fi
wait "$hp" || soft "cli phase: the harness exited $?: $(tail -n 3 "$T/cli.err" | tr '\n' ' ')"

# six runs of the harness (recorded, keeper, keeper held, two live, cli),
# two UPDATEs each
[ "$($PSQL -Atc 'SELECT v FROM t WHERE id = 1')" = 12 ] ||
	soft "the row was not updated by all twelve sessions (v=$($PSQL -Atc 'SELECT v FROM t WHERE id = 1'))"
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$T/pg" stop -m immediate -t 20 >>"$T/pg_ctl.log" 2>&1 ||
	soft "pg_ctl stop failed"
real_finish "postgres: psql B -> its backend -> A's backend (pg_blocking_pids) -> A's psql"
