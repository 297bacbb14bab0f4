#!/bin/bash
# e2e (real programs): the sqlite3 shell in SQLite's busy-retry loop, on a
# database another sqlite3 holds with BEGIN EXCLUSIVE.
#
#   A        sqlite3 DB, fed from a FIFO: BEGIN EXCLUSIVE;  then, HOLD s
#            later, COMMIT;
#   victim   sqlite3 -cmd '.timeout MS' DB "INSERT ...": its busy handler
#            tries fcntl(F_SETLK) on the lock bytes, gets EAGAIN, sleeps
#            (clock_nanosleep, 1 to 100 ms) and tries again, until A
#            commits.  A sleep loop, not one wait: nobody wakes it.
#
# Ground truth, independent of Argus: /proc/locks, whose POSIX lock line
# on the database's inode names the holder's pid (a F_SETLK retry has no
# `->` waiter line), the victim in clock_nanosleep or fcntl
# (/proc/PID/syscall 230 or 72), harness timestamps.  Expected culprit:
# A's sqlite3 (the lock's holder); this needs lock records in the trace.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/real_lib.sh"
command -v sqlite3 >/dev/null || fail "no sqlite3 (package sqlite3)"

DB=$T/db.sqlite
sqlite3 "$DB" "CREATE TABLE t (x);" >"$T/schema.log" 2>&1 || fail "could not create the database" "$T/schema.log"

cat >"$T/harness.sh" <<SH
set -u
hold=\$1 g=\$2
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }
end=\$((SECONDS + 20))
ino=\$(stat -c %i "$DB")
rm -f "\$g.fifo"; mkfifo "\$g.fifo"
sqlite3 "$DB" <"\$g.fifo" >"\$g.a.out" 2>&1 &
A=\$!
echo "\$A" >>"\$g.pids"
exec 3>"\$g.fifo"
echo "BEGIN EXCLUSIVE;" >&3
until grep -qE "^[0-9]+: POSIX +ADVISORY +WRITE +[0-9]+ [0-9a-f]+:[0-9a-f]+:\$ino " /proc/locks; do
	[ \$SECONDS -lt \$end ] || { echo "harness: session A never locked the database" >&2; exit 1; }
	sleep 0.02
done
holder=\$(grep -E "^[0-9]+: POSIX +ADVISORY +WRITE +[0-9]+ [0-9a-f]+:[0-9a-f]+:\$ino " /proc/locks | awk '{print \$5}' | sort -u)
[ "\$holder" = "\$A" ] || { echo "harness: /proc/locks says \$holder holds the database, not A (\$A)" >&2; exit 1; }
sqlite3 -cmd ".timeout \$(( (\${hold%.*} + 10) * 1000 ))" "$DB" "INSERT INTO t VALUES (1);" >"\$g.b.out" 2>&1 &
V=\$!
echo "\$V" >>"\$g.pids"
# in its busy loop: 5 samples in a row in clock_nanosleep (230) or fcntl (72)
n=0
while [ \$n -lt 5 ]; do
	case "\$(cut -d' ' -f1 /proc/\$V/syscall 2>/dev/null)" in 230|72) n=\$((n + 1)) ;; *) n=0 ;; esac
	[ \$SECONDS -lt \$end ] || { echo "harness: the second sqlite3 never entered its busy loop" >&2; exit 1; }
	sleep 0.02
done
{
	echo "VICTIM_PID=\$V"
	echo "CULPRIT_PID=\$holder"
	echo "CULPRIT_COMM=sqlite3"
	echo "CHAIN="
	echo "PROC_LOCKS=\$(grep -E ":\$ino " /proc/locks | tr -s ' ' | paste -sd '|')"
	echo "IN_WAIT_NS=\$(mono)"
	echo "READY=1"
} >>"\$g"
sleep "\$hold"
echo "COMMIT;" >&3
exec 3>&-
wait "\$V" || { echo "harness: the INSERT failed: \$(cat "\$g.b.out")" >&2; exit 1; }
echo "DONE_NS=\$(mono)" >>"\$g"
wait "\$A" || { echo "harness: session A failed: \$(cat "\$g.a.out")" >&2; exit 1; }
SH

real_run_harness sqlite 3
real_check_diagnose "$TRACE" "$GT"
real_check_hangs "$TRACE" "$GT"
# (session A, reading its FIFO in a blocking read(), is kept too)
real_keeper 6 sqlite3
real_live 8 3
real_live 8 random
# four runs of the harness (recorded, keeper, two live), one INSERT each
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM t')" = 4 ] ||
	soft "the four INSERTs did not all land (count $(sqlite3 "$DB" 'SELECT count(*) FROM t'))"
real_finish "sqlite busy loop: the retrying sqlite3 is blamed on the lock's holder"
