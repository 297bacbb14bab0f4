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
real_live 8 3
real_live 8 random
# three runs of the harness (recorded, two live), two UPDATEs each
[ "$($PSQL -Atc 'SELECT v FROM t WHERE id = 1')" = 6 ] ||
	soft "the row was not updated by all six sessions (v=$($PSQL -Atc 'SELECT v FROM t WHERE id = 1'))"
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$T/pg" stop -m immediate -t 20 >>"$T/pg_ctl.log" 2>&1 ||
	soft "pg_ctl stop failed"
real_finish "postgres: psql B -> its backend -> A's backend (pg_blocking_pids) -> A's psql"
