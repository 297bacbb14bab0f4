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
my ($M, $S) = map { $ENV{$_} } qw(MON SIGNALS);
my (%enq, $cross, $bad);
for my $e (grep { $_->{type} =~ /^work_/ && $_->{pid} == $M && $_->{rest} =~ /kind=source/ } @ev) {
	my ($item) = $e->{rest} =~ /item=(0x[0-9a-f]+)/;
	if ($e->{type} eq "work_enqueue") { push @{$enq{$item}}, $e; next; }
	next unless $e->{type} eq "work_begin" && $e->{tid} == $M;
	my $q = shift @{$enq{$item} // []};
	next unless $q && $q->{tid} != $M;
	if ($q->{ts} > $e->{ts}) { print STDERR "FAIL: begun before its enqueue: $e->{line}\n"; $bad = 1; }
	$cross++;
}
$cross //= 0;
if ($cross < $S) { print STDERR "FAIL: $cross sources queued by another thread and dispatched on the main thread, $S signals printed\n"; exit 1; }
print STDERR "ok: $cross sources queued by the GDBus worker and dispatched on the main thread ($S signals printed)\n";
exit($bad // 0);
' || fail "the GDBus hand-offs are not in the trace as work items (see above)"
"$ARGUS" graph "$T/s.argus" >"$T/graph.txt" 2>&1 || fail "argus graph failed" "$T/graph.txt"
e=$(awk '$1 == "workitem" { print $2 }' "$T/graph.txt")
[ "${e:-0}" -ge "$SIGNALS" ] || fail "the graph has ${e:-0} workitem edges, expected >= $SIGNALS" "$T/graph.txt"
pass "gdbus monitor: $SIGNALS signals handed from the GDBus worker to the main loop are work items ($e workitem edges)"
