#!/bin/bash
# e2e (real programs): apt-get waiting for the dpkg frontend lock.
#
#   holder   python3 takes a POSIX write lock (lockf, as dpkg and apt take
#            theirs) on /var/lib/dpkg/lock-frontend and holds it HOLD s
#   victim   apt-get -o DPkg::Lock::Timeout=60 check: apt's lock retry
#            loop (fcntl F_SETLK refused with EAGAIN, F_GETLK to learn the
#            holder, a 1 s clock_nanosleep, again), the same loop
#            `apt-get install` runs while another apt or dpkg works
#            (`check` takes the lock and changes nothing on the system)
#
# Ground truth, independent of Argus: /proc/locks, whose POSIX line on the
# lock file's inode names the holder's pid, while the victim sits in its
# sleep between two tries (/proc/PID/syscall, 230); apt-get's exit status
# 0 once the holder let go; harness timestamps.  Expected: apt-get is
# blamed on the python3 holding the lock (no chain behind it: it sleeps).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/real_lib.sh"
command -v apt-get >/dev/null || fail "no apt-get (package apt)"
[ -e /var/lib/dpkg/lock-frontend ] || fail "no /var/lib/dpkg/lock-frontend (is this Debian?)"
# nobody else may be using apt now: the test would wait for them, not us
if grep -qE " POSIX .*:$(stat -c %i /var/lib/dpkg/lock-frontend) " /proc/locks; then
	fail "/var/lib/dpkg/lock-frontend is held already (another apt or dpkg runs): $(grep -E ":$(stat -c %i /var/lib/dpkg/lock-frontend) " /proc/locks)"
fi

cat >"$T/holder.py" <<'PY'
import fcntl, sys, time
f = open("/var/lib/dpkg/lock-frontend", "w")
fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("LOCKED", flush=True)
time.sleep(float(sys.argv[1]))
PY

cat >"$T/harness.sh" <<SH
set -u
hold=\$1 g=\$2
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }
ino=\$(stat -c %i /var/lib/dpkg/lock-frontend)
/usr/bin/python3 "$T/holder.py" "\$hold" >"\$g.holder" &
H=\$!
echo "\$H" >>"\$g.pids"
end=\$((SECONDS + 10))
until grep -qE "^[0-9]+: POSIX +ADVISORY +WRITE +\$H [0-9a-f]+:[0-9a-f]+:\$ino " /proc/locks; do
	[ \$SECONDS -lt \$end ] || { echo "harness: the holder never took the lock" >&2; exit 1; }
	sleep 0.02
done
apt-get -o DPkg::Lock::Timeout=60 check >"\$g.apt.out" 2>&1 &
V=\$!
echo "\$V" >>"\$g.pids"
# apt-get sleeps between two refused tries: clock_nanosleep (230)
until [ "\$(cut -d' ' -f1 /proc/\$V/syscall 2>/dev/null)" = 230 ]; do
	[ \$SECONDS -lt \$end ] || { echo "harness: apt-get never waited for the lock" >&2; exit 1; }
	sleep 0.02
done
{
	echo "VICTIM_PID=\$V"
	echo "CULPRIT_PID=\$H"
	echo "CULPRIT_COMM=python3"
	echo "CHAIN="
	echo "PROC_LOCKS=\$(grep -E ":\$ino " /proc/locks | tr -s ' ' | paste -sd '|')"
	echo "IN_WAIT_NS=\$(mono)"
	echo "READY=1"
} >>"\$g"
wait "\$V" || { echo "harness: apt-get failed: \$(tail -n 3 "\$g.apt.out")" >&2; exit 1; }
echo "DONE_NS=\$(mono)" >>"\$g"
wait "\$H"
SH

real_run_harness apt 3.5
real_check_diagnose "$TRACE" "$GT"
real_check_hangs "$TRACE" "$GT"
real_keeper 6 apt-get
# the holder's sleep starts before apt-get waits: hold 8.5 s for a live
# hang of 8 s (real_lib.sh: real_live)
real_live 8.5 3
real_live 8.5 random
real_finish "apt: apt-get's lock retries are blamed on the /proc/locks holder, in the trace and live in lldb"
