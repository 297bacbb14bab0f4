#!/bin/bash
# e2e (real programs): an X11 client (xprop, Xlib over xcb) waiting for
# the X server's reply while the server is stopped.
#
#   server   Xvfb -displayfd (a free display number, chosen by Xvfb), no TCP:
#            a unix socket only
#   victim   xprop -root: connects, sends its setup request and waits inside
#            xcb's poll() for the reply
#   the hang the harness SIGSTOPs Xvfb before the client starts and SIGCONTs
#            it HOLD s later from a subshell: (sleep HOLD; kill -CONT)
#
# Ground truth, independent of Argus: Xvfb stopped (state T in
# /proc/PID/stat) while xprop sits in poll (/proc/PID/syscall, 7); the pid
# of the subshell that sends SIGCONT; xprop's output (it got the root
# window's properties); harness timestamps.  Expected: xprop is blamed on
# Xvfb, whose culprit is the subshell that resumed it.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/real_lib.sh"
command -v Xvfb >/dev/null || fail "no Xvfb (package xvfb)"
command -v xprop >/dev/null || fail "no xprop (package x11-utils)"

Xvfb -displayfd 3 -nolisten tcp -screen 0 640x480x24 3>"$T/display" >"$T/xvfb.log" 2>&1 &
XVFB=$!
E2E_PIDS+=("$XVFB")
REAL_CLEANUP+=("kill -CONT $XVFB")
end=$((SECONDS + 15))
until [ -s "$T/display" ]; do
	kill -0 "$XVFB" 2>/dev/null || fail "Xvfb exited" "$T/xvfb.log"
	[ $SECONDS -lt $end ] || fail "Xvfb did not come up in 15 s" "$T/xvfb.log"
	sleep 0.05
done
DPY=:$(head -n 1 "$T/display")
DISPLAY=$DPY xprop -root >"$T/xprop0.out" 2>&1 || fail "xprop cannot talk to Xvfb on $DPY" "$T/xprop0.out"
log "Xvfb $XVFB on $DPY"

cat >"$T/harness.sh" <<SH
set -u
hold=\$1 g=\$2
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }
end=\$((SECONDS + 20))
kill -STOP $XVFB
until [ "\$(awk '{print \$3}' /proc/$XVFB/stat)" = T ]; do sleep 0.01; done
DISPLAY=$DPY xprop -root >"\$g.xprop.out" 2>&1 &
V=\$!
echo "\$V" >>"\$g.pids"
n=0
while [ \$n -lt 5 ]; do
	[ "\$(cut -d' ' -f1 /proc/\$V/syscall 2>/dev/null)" = 7 ] && n=\$((n + 1)) || n=0
	[ \$SECONDS -lt \$end ] || { kill -CONT $XVFB; echo "harness: xprop never waited in poll" >&2; exit 1; }
	sleep 0.02
done
( sleep "\$hold"; kill -CONT $XVFB ) &
R=\$!
echo "\$R" >>"\$g.pids"
{
	echo "VICTIM_PID=\$V"
	echo "CULPRIT_PID=$XVFB"
	echo "CULPRIT_COMM=Xvfb"
	echo "CHAIN=\$R"
	# live, before the subshell acts: Xvfb, stopped by a signal
	echo "LIVE_CHAIN="
	# argusd's own snapshot (real_keeper) of a hang still going on: saved
	# at threshold + grace (5 s) into it, before the subshell acts at the
	# end of a longer hold
	echo "KEEPER_CHAIN="
	echo "LIVE_STOPPED=signal"
	echo "XVFB_STATE=\$(awk '{print \$3}' /proc/$XVFB/stat)"
	echo "IN_WAIT_NS=\$(mono)"
	echo "READY=1"
} >>"\$g"
wait "\$V" || { echo "harness: xprop failed: \$(cat "\$g.xprop.out")" >&2; exit 1; }
echo "DONE_NS=\$(mono)" >>"\$g"
wait "\$R"
grep -q '^[A-Z_0-9]*(' "\$g.xprop.out" || { echo "harness: xprop printed no property" >&2; exit 1; }
exit 0
SH

real_run_harness xlib 3
real_check_diagnose "$TRACE" "$GT"
real_check_hangs "$TRACE" "$GT"
real_keeper 6 xprop
real_live 8 3
real_live 8 random
kill -CONT "$XVFB" 2>/dev/null; kill "$XVFB" 2>/dev/null; wait "$XVFB" 2>/dev/null
real_finish "xlib: xprop -> the stopped Xvfb -> the subshell that resumed it"
