#!/bin/bash
# e2e (real programs): a /usr/bin/python3 parent whose main thread blocks
# in read() on a pipe that a late child fills.
#
#   python3: p = Popen(["sh", "-c", "sleep HOLD; echo x"], stdout=PIPE)
#            os.read(p.stdout.fileno(), 1)       # blocks ~HOLD s
#
# A script with no event loop: its one long wait is the hang.  Ground
# truth: the child's pid from the parent's own output, the child's own
# child (the sleep it waits for) from /proc/PID/task/PID/children, the
# parent inside read (/proc/PID/syscall, 0) and harness timestamps.
# Expected: the parent is blamed on the sh child (it wrote the byte that
# ended the read), whose own culprit is its sleep.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/real_lib.sh"

cat >"$T/parent.py" <<'PY'
import os, subprocess, sys
hold = sys.argv[1]
p = subprocess.Popen(["sh", "-c", f"sleep {hold}; echo x"], stdout=subprocess.PIPE)
print(f"PARENT_PID={os.getpid()}", flush=True)
print(f"CHILD_PID={p.pid}", flush=True)
b = os.read(p.stdout.fileno(), 1)
print(f"GOT={b.decode()!r}", flush=True)
sys.exit(p.wait())
PY

cat >"$T/harness.sh" <<SH
set -u
hold=\$1 g=\$2
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }
/usr/bin/python3 "$T/parent.py" "\$hold" >"\$g.parent" &
V=\$!
echo "\$V" >>"\$g.pids"
end=\$((SECONDS + 10))
# the parent has said who its child is, and its main thread is in read (0)
until grep -q '^CHILD_PID=' "\$g.parent" && [ "\$(cut -d' ' -f1 /proc/\$V/syscall 2>/dev/null)" = 0 ]; do
	[ \$SECONDS -lt \$end ] || { echo "harness: the parent never blocked in read" >&2; exit 1; }
	sleep 0.02
done
C=\$(sed -n 's/^CHILD_PID=//p' "\$g.parent")
echo "\$C" >>"\$g.pids"
S=""
until [ -n "\$S" ]; do
	S=\$(cat /proc/\$C/task/\$C/children 2>/dev/null | awk '{print \$1}')
	[ \$SECONDS -lt \$end ] || { echo "harness: the child never started its sleep" >&2; exit 1; }
	[ -n "\$S" ] || sleep 0.02
done
{
	echo "VICTIM_PID=\$V"
	echo "CULPRIT_PID=\$C"
	echo "CULPRIT_COMM=sh"
	echo "CHAIN=\$S"
	echo "CHILDS_CHILD=\$S (\$(cat /proc/\$S/comm 2>/dev/null))"
	echo "IN_WAIT_NS=\$(mono)"
	echo "READY=1"
} >>"\$g"
wait "\$V" || { echo "harness: the parent failed" >&2; exit 1; }
echo "DONE_NS=\$(mono)" >>"\$g"
grep -q "^GOT='x'" "\$g.parent" || { echo "harness: the parent did not read the child's byte" >&2; exit 1; }
SH

real_run_harness late_child 2.5
real_check_diagnose "$TRACE" "$GT"
real_check_hangs "$TRACE" "$GT"
# the parent is /usr/bin/python3: its comm is python3
real_keeper 6 python3
# the child's sleep starts before the parent reads: hold 8.5 s for a live
# hang of 8 s (real_lib.sh: real_live)
real_live 8.5 3
real_live 8.5 random
real_finish "late child: the python parent's read is blamed on the sh child that wrote"
