#!/bin/bash
# e2e: a real GLib program nobody here wrote, under the interposer:
# `gdbus monitor` (libglib2.0-bin) on a private dbus-daemon.  GDBus reads
# the bus on its own worker thread ("gdbus") and hands each signal to the
# main thread by attaching an idle GSource to the main context
# (g_source_attach from libgio, through the PLT): each should be a work
# item enqueued on the worker thread and dispatched on the main thread.
# Five `dbus-send` clients connect and leave: the bus emits
# NameOwnerChanged for each, and the monitor prints every one it got.
# Asserts:
#   - gdbus monitor runs normally under the interposer (it prints the
#     signals; no record is rejected);
#   - at least as many source items enqueued by another thread of the
#     monitor and begun on its main thread as signals it printed, each
#     begun after its enqueue, and as many workitem edges.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
LIB=$BUILD/lib/libargus-interpose.so
[ -f "$LIB" ] || fail "no $LIB (build first)"
command -v gdbus >/dev/null || fail "no gdbus (package libglib2.0-bin)"
command -v dbus-daemon >/dev/null || fail "no dbus-daemon (package dbus)"

start_private_bus

mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 256M --no-watch-interactive
LD_PRELOAD=$LIB gdbus monitor --address "$BUS" --dest org.freedesktop.DBus >"$T/mon.out" 2>"$T/mon.err" &
MON=$!
E2E_PIDS+=("$MON")
end=$((SECONDS + 10))
until grep -q '^Monitoring' "$T/mon.out"; do
	kill -0 "$MON" 2>/dev/null || fail "gdbus monitor exited under the interposer" "$T/mon.err"
	[ $SECONDS -lt $end ] || fail "gdbus monitor did not start in 10 s" "$T/mon.err"
	sleep 0.05
done
sleep 0.2
for i in 1 2 3 4 5; do
	timeout 10 dbus-send --bus="$BUS" --dest=org.freedesktop.DBus --type=method_call --print-reply \
		/org/freedesktop/DBus org.freedesktop.DBus.ListNames >/dev/null 2>>"$T/send.err" ||
		fail "dbus-send failed" "$T/send.err"
done
sleep 0.5
# SIGTERM: a background job of a non-interactive shell ignores SIGINT
kill -TERM "$MON"
wait "$MON"
export MON SIGNALS=$(grep -c 'NameOwnerChanged' "$T/mon.out")
[ "$SIGNALS" -ge 10 ] || fail "gdbus monitor printed $SIGNALS NameOwnerChanged signals, expected >= 10" "$T/mon.out"
log "gdbus monitor $MON printed $SIGNALS signals"
"$ARGUS" status --raw >"$T/status" 2>&1 || fail "argus status failed" "$T/status"
[ "$(sed -n 's/^interpose_invalid=//p' "$T/status")" = 0 ] || fail "true records were rejected as invalid" "$T/status"

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump" --pid "$MON"
check_dump "$T/s.dump" '
M, S = int(ENV["MON"]), int(ENV["SIGNALS"])
enq, cross, bad = {}, 0, 0
for e in ev:
	if not (e["type"].startswith("work_") and e["pid"] == M and e.get("kind") == "source"):
		continue
	if e["type"] == "work_enqueue":
		enq.setdefault(e["item"], []).append(e)
		continue
	if not (e["type"] == "work_begin" and e["tid"] == M):
		continue
	q = enq.get(e["item"], [])
	q = q.pop(0) if q else None
	if not (q and q["tid"] != M):
		continue
	if q["ts"] > e["ts"]:
		say("FAIL: begun before its enqueue: " + e["line"]); bad = 1
	cross += 1
if cross < S:
	say("FAIL: %d sources queued by another thread and dispatched on the main thread, %d signals printed" % (cross, S)); sys.exit(1)
say("ok: %d sources queued by the GDBus worker and dispatched on the main thread (%d signals printed)" % (cross, S))
sys.exit(bad)
' || fail "the GDBus hand-offs are not in the trace as work items (see above)"
"$ARGUS" graph "$T/s.argus" >"$T/graph.txt" 2>&1 || fail "argus graph failed" "$T/graph.txt"
e=$(awk '$1 == "workitem" { print $2 }' "$T/graph.txt")
[ "${e:-0}" -ge "$SIGNALS" ] || fail "the graph has ${e:-0} workitem edges, expected >= $SIGNALS" "$T/graph.txt"
pass "gdbus monitor: $SIGNALS signals handed from the GDBus worker to the main loop are work items ($e workitem edges)"
