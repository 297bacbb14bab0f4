#!/bin/bash
# e2e (real programs): curl waiting on python3's http.server, whose request
# thread is stuck opening a FIFO until a late writer appears.
#
#   server   /usr/bin/python3 -m http.server --bind 127.0.0.1 PORT
#            --directory $T/www  (ThreadingHTTPServer: a thread a request)
#   victim   curl http://127.0.0.1:PORT/f: waits in poll() on its loopback
#            TCP socket for the response
#   f        a FIFO: the request thread blocks in open() until a writer
#            opens it: sh -c 'sleep HOLD; echo data > f'
#
# Ground truth, independent of Argus: the server's task blocked in openat
# (/proc/PID/task/TID/syscall, 257) while curl sits in poll (7), the
# writer's pid, the server's own access log line, harness timestamps.
# Expected: curl is blamed on that request thread of the server, whose
# culprit is the writer.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/real_lib.sh"
command -v curl >/dev/null || fail "no curl"

mkdir -p "$T/www"
mkfifo "$T/www/f"
# a free loopback port (the kernel's pick; the bind below fails loudly if
# something took it in between)
PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
/usr/bin/python3 -u -m http.server --bind 127.0.0.1 "$PORT" --directory "$T/www" \
	>"$T/server.out" 2>"$T/server.log" &
SERVER=$!
E2E_PIDS+=("$SERVER")
end=$((SECONDS + 10))
until grep -q '^Serving HTTP' "$T/server.out"; do
	kill -0 "$SERVER" 2>/dev/null || fail "http.server exited" "$T/server.log"
	[ $SECONDS -lt $end ] || fail "http.server did not come up in 10 s" "$T/server.log"
	sleep 0.05
done
log "http.server $SERVER on 127.0.0.1:$PORT"

cat >"$T/harness.sh" <<SH
set -u
hold=\$1 g=\$2
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }
end=\$((SECONDS + 20))
curl -sS -m 60 -o "\$g.curl.out" "http://127.0.0.1:$PORT/f" 2>"\$g.curl.err" &
V=\$!
echo "\$V" >>"\$g.pids"
# the server's request thread is in openat (257) and curl in poll (7)
tid=""
while :; do
	for t in /proc/$SERVER/task/*; do
		[ "\$(cut -d' ' -f1 \$t/syscall 2>/dev/null)" = 257 ] && tid=\${t##*/}
	done
	[ -n "\$tid" ] && [ "\$(cut -d' ' -f1 /proc/\$V/syscall 2>/dev/null)" = 7 ] && break
	[ \$SECONDS -lt \$end ] || { echo "harness: the server never blocked opening the FIFO" >&2; exit 1; }
	sleep 0.02
done
sh -c "sleep \$hold; echo data > $T/www/f" &
W=\$!
echo "\$W" >>"\$g.pids"
{
	echo "VICTIM_PID=\$V"
	echo "CULPRIT_PID=$SERVER"
	echo "CULPRIT_TID=\$tid"
	echo "CULPRIT_COMM=\$(cat /proc/$SERVER/task/\$tid/comm)"
	echo "CHAIN=\$W"
	# the writer opens the FIFO only when its sleep ends, HOLD s in:
	# attached (lldb) or saved (argusd, threshold + grace in) before
	# that, nothing can name it yet; the request thread it unblocks is
	# named all the same
	echo "LIVE_CHAIN="
	echo "KEEPER_CHAIN="
	echo "SERVER_TASK_WCHAN=\$(cat /proc/$SERVER/task/\$tid/wchan 2>/dev/null)"
	echo "IN_WAIT_NS=\$(mono)"
	echo "READY=1"
} >>"\$g"
wait "\$V" || { echo "harness: curl failed: \$(cat "\$g.curl.err")" >&2; exit 1; }
echo "DONE_NS=\$(mono)" >>"\$g"
wait "\$W"
echo "SERVER_LOG=\$(grep -F 'GET /f' "$T/server.log" | tail -n 1)" >>"\$g"
grep -qF 'GET /f HTTP/1.1" 200' "$T/server.log" || { echo "harness: the server did not log the request" >&2; exit 1; }
exit 0
SH

real_run_harness http 3
real_check_diagnose "$TRACE" "$GT"
real_check_hangs "$TRACE" "$GT"
real_keeper 6 curl
real_live 8 3
real_live 8 random
kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null
real_finish "http: curl -> the http.server request thread -> the FIFO's late writer"
