#!/bin/bash
# e2e: kill -9 of the daemon leaves a readable ring.  A workload runs ~4.5 s
# under a collector, argusd is killed with SIGKILL right after; then
#   - `argus dump DIR/ring.argus` succeeds (exit 0) and holds the
#     workload's events, up to at most the in-flight chunk (chunks are cut
#     at least every second, so the last workload event in the ring must
#     be within 2.5 s of the workload's end);
#   - a torn chunk in the middle of that ring (what power loss can leave:
#     the disk flushed a later write but not this one) costs only that
#     chunk: `argus dump` still succeeds and says which chunk it skipped;
#   - `argus start` works again (the stale socket is replaced) and stops.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

RING_DIR=$T/ring
start_collector --dir "$RING_DIR" --size 64M
pid=$(collector_pid)
is_argusd "$pid" || fail "no argusd with the pid in the run dir ('$pid')"

# ~4.5 s: at least three whole chunks (cut every second) before the kill,
# even when a loaded machine (the ASan build) cuts them late
"$APPS/pipe_pingpong" 900 2500 >"$T/pp.out" || fail "the workload failed"
wpid=$(kv PARENT_PID "$T/pp.out")
wstart=$(kv START_NS "$T/pp.out")
wend=$(kv END_NS "$T/pp.out")
kill -KILL "$pid"
for _ in $(seq 40); do is_argusd "$pid" || break; sleep 0.1; done
is_argusd "$pid" && fail "argusd $pid survived kill -9"
log "workload pid $wpid ran $(( (wend - wstart) / 1000000 )) ms; argusd $pid killed with SIGKILL"
[ -S "$ARGUS_RUN_DIR/argusd.sock" ] && log "stale socket left behind, as expected"

dump_to "$RING_DIR/ring.argus" "$T/ring.dump"
export WPID=$wpid WSTART=$wstart WEND=$wend
check_dump "$T/ring.dump" '
P, S, E = (int(ENV[k]) for k in ("WPID", "WSTART", "WEND"))
w = [e for e in ev if e["pid"] == P]
if not w:
	say("FAIL: no event of the workload (pid %d) in the ring after kill -9" % P)
	if len(ev) >= 12:
		show(ev[-12:])
	sys.exit(1)
first, last = w[0]["ts"], w[-1]["ts"]
say("workload events in the ring: %d, from %+.3f s to %+.3f s relative to its start; it ended at %+.3f s" % (len(w), (first - S) / 1e9, (last - S) / 1e9, (E - S) / 1e9))
if first > S + 500000000:
	say("FAIL: the first %.3f s of the workload are missing" % ((first - S) / 1e9)); sys.exit(1)
if last < E - 2500000000:
	say("FAIL: the ring lost %.3f s before the kill (more than the in-flight chunk)" % ((E - last) / 1e9)); show(w[-1:]); sys.exit(1)
' || fail "the ring after kill -9 lacks the workload's events (see above)"
grep '^# ' "$T/ring.dump" | sed 's/^/    /'

# power loss: flip one payload byte of the middle chunk (by offset; the
# 64 MiB ring has not wrapped in 5 s, so it is not the newest)
cp "$RING_DIR/ring.argus" "$T/torn.argus"
torn=$(python3 -c '
import sys
o = []
with open(sys.argv[1], "rb") as f:
	b = 4096
	while True:
		f.seek(b); h = f.read(64)
		if len(h) != 64:
			break
		if h[:4] == b"ACHK":
			o.append(b)
		b += 4096
if len(o) < 3:
	sys.exit("only %d chunks" % len(o))
print(o[len(o) // 2])
' "$T/torn.argus") ||
	fail "could not find three chunks in the ring"
flip_byte "$T/torn.argus" $((torn + 64 + 100))
"$ARGUS" dump "$T/torn.argus" >"$T/torn.dump" 2>"$T/torn.err" ||
	fail "dump of a ring with one torn chunk failed" "$T/torn.err"
grep -q "1 corrupt chunks skipped (first at offset $(printf '0x%x' "$torn"), chunk seq [0-9]*: payload checksum mismatch)" "$T/torn.dump" ||
	fail "the dump does not say it skipped the torn chunk at $(printf '0x%x' "$torn"): $(grep '^# ' "$T/torn.dump" | head -2)"
n_all=$(grep -vc '^#' "$T/ring.dump"); n_torn=$(grep -vc '^#' "$T/torn.dump")
[ "$n_torn" -gt 0 ] && [ "$n_torn" -lt "$n_all" ] ||
	fail "the torn ring should keep the other chunks' events ($n_torn of $n_all)"
log "torn chunk at $(printf '0x%x' "$torn"): skipped and reported; $n_torn of $n_all events still read"

start_collector --dir "$RING_DIR" --size 64M
pid2=$(collector_pid)
is_argusd "$pid2" && [ "$pid2" != "$pid" ] || fail "argus start after kill -9 did not start a new argusd ('$pid2')"
"$ARGUS" status >"$T/status.out" 2>"$T/status.err" || fail "status after restart failed" "$T/status.err"
"$ARGUS" stop >"$T/stop.out" 2>"$T/stop.err" || fail "stop after restart failed" "$T/stop.err"
[ ! -e "$ARGUS_RUN_DIR/argusd.sock" ] || fail "the socket is still there after stop"
pass "ring readable after kill -9 with the workload's events; a torn chunk costs only itself; restart over the stale socket works"
