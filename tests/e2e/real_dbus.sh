#!/bin/bash
# e2e (real programs): dbus-send blocked in a D-Bus round trip through a
# private dbus-daemon to a slow service.
#
#   bus       dbus-daemon --config-file (session type, listening only on
#             unix:path=$T/bus) --nofork --print-address --print-pid
#   service   /usr/bin/python3 + python3-dbus + GLib's main loop: owns
#             org.argus.Slow; its method Slow() sleeps HOLD s, then answers
#   victim    dbus-send --print-reply ... org.argus.Slow.Slow: waits inside
#             libdbus's poll() for the reply
#
# Ground truth, independent of Argus: the daemon's pid (--print-pid), the
# service's own log (its pid, the monotonic time the call came in and the
# time it answered), the victim in poll (/proc/PID/syscall, 7) while the
# service is inside the call, harness timestamps.  Expected: dbus-send is
# blamed on dbus-daemon (the reply comes from it), whose culprit is the
# service, asleep in its method.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/real_lib.sh"
command -v dbus-daemon >/dev/null || fail "no dbus-daemon (package dbus)"
command -v dbus-send >/dev/null || fail "no dbus-send (package dbus)"
/usr/bin/python3 -c 'import dbus, dbus.mainloop.glib; from gi.repository import GLib' 2>"$T/py.err" ||
	fail "python3-dbus or python3-gi is missing" "$T/py.err"

start_private_bus
[ "$(head -n 1 "$T/bus.pid")" = "$DAEMON" ] || fail "dbus-daemon says its pid is $(cat "$T/bus.pid"), not $DAEMON"
log "dbus-daemon $DAEMON on $(head -n 1 "$T/bus.addr")"

cat >"$T/service.py" <<'PY'
# A slow D-Bus service: Slow() sleeps HOLD seconds in the main loop's thread.
import os, sys, time
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib
addr, hold, logf = sys.argv[1], float(sys.argv[2]), sys.argv[3]
def log(s):
    with open(logf, "a") as f:
        f.write(s + "\n")
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(addr)
name = dbus.service.BusName("org.argus.Slow", bus)
class Slow(dbus.service.Object):
    @dbus.service.method("org.argus.Slow", in_signature="", out_signature="s")
    def Slow(self):
        log(f"CALL_NS={time.monotonic_ns()}")
        time.sleep(hold)
        log(f"ANSWER_NS={time.monotonic_ns()}")
        return "slept"
Slow(bus, "/org/argus/Slow")
loop = GLib.MainLoop()
GLib.timeout_add(int((hold + 30) * 1000), loop.quit)   # never outlives the test
log(f"SERVICE_PID={os.getpid()}")
loop.run()
PY

cat >"$T/harness.sh" <<SH
set -u
hold=\$1 g=\$2
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }
end=\$((SECONDS + 20))
/usr/bin/python3 "$T/service.py" "$BUS" "\$hold" "\$g.service" 2>"\$g.service.err" &
S=\$!
echo "\$S" >>"\$g.pids"
until grep -q '^SERVICE_PID=' "\$g.service" 2>/dev/null; do
	kill -0 "\$S" 2>/dev/null || { echo "harness: the service died: \$(cat "\$g.service.err")" >&2; exit 1; }
	[ \$SECONDS -lt \$end ] || { echo "harness: the service never owned its name" >&2; exit 1; }
	sleep 0.05
done
dbus-send --bus="$BUS" --print-reply --reply-timeout=60000 --dest=org.argus.Slow \
	/org/argus/Slow org.argus.Slow.Slow >"\$g.send.out" 2>&1 &
V=\$!
echo "\$V" >>"\$g.pids"
# in the hang: the service logged the call and dbus-send sits in poll (7)
until grep -q '^CALL_NS=' "\$g.service" && [ "\$(cut -d' ' -f1 /proc/\$V/syscall 2>/dev/null)" = 7 ]; do
	[ \$SECONDS -lt \$end ] || { echo "harness: dbus-send never waited for the service" >&2; exit 1; }
	sleep 0.02
done
{
	echo "VICTIM_PID=\$V"
	echo "CULPRIT_PID=$DAEMON"
	echo "CULPRIT_COMM=dbus-daemon"
	echo "CHAIN=\$(sed -n 's/^SERVICE_PID=//p' "\$g.service")"
	echo "IN_WAIT_NS=\$(mono)"
	echo "READY=1"
} >>"\$g"
wait "\$V" || { echo "harness: dbus-send failed: \$(cat "\$g.send.out")" >&2; exit 1; }
echo "DONE_NS=\$(mono)" >>"\$g"
grep -q 'string "slept"' "\$g.send.out" || { echo "harness: no reply from the service" >&2; exit 1; }
sed 's/^/SERVICE_LOG_/' "\$g.service" >>"\$g"
kill "\$S"; wait "\$S"
exit 0
SH

real_run_harness dbus 3
real_check_diagnose "$TRACE" "$GT"
real_check_hangs "$TRACE" "$GT"
real_keeper 6 dbus-send
# the service's sleep starts as the victim enters poll: hold 8.5 s for a
# live hang of 8 s (real_lib.sh: real_live).  dbus-send's reply wait is a
# poll() on its one connection, whose socket the collector records since
# session 14 (poll_one_obj in argus.bpf.c): the Hello round trip on it is
# a normal run, and live the fd-peer source names dbus-daemon.  (Before,
# the phases failed in 2 of 5 and 5 of 7 runs.)
real_live 8.5 3
real_live 8.5 random
kill "$DAEMON" 2>/dev/null; wait "$DAEMON" 2>/dev/null
real_finish "dbus: dbus-send -> dbus-daemon -> the slow service"
