#!/bin/bash
# e2e: a periodic monitoring loop is not a hang, live (argusd's always-on
# hang reports) or offline (argus hangs).
#
# The loop ("monloop": /usr/bin/python3 exec'd through a symlink of that
# name, its comm) does, round after round: read /proc/loadavg,
# /proc/self/stat and /proc/meminfo (open, read, close each), write one
# short line to its log, then time.sleep(0.1).  Every round's work
# succeeds and the thread then sleeps until its next period: it is idle
# between rounds, waiting for time to pass, and nobody waits for it.
# Compare a retry loop (sqlite3's busy handler, apt's lock loop: real_*.sh):
# there each try FAILS (F_SETLK refused with EAGAIN) and the sleep is a
# wait for someone else to let go, which is a hang.  A loop of short
# sleeps alone does not tell the two apart; whether the work between the
# sleeps succeeded does.
#
#  1. live: a private collector with --watch monloop --watch flock (default
#     --hang-threshold 2000 ms and --hang-grace: what a user gets),
#     --no-watch-interactive, a private --hang-dir.  No `argus save`.
#     The loop runs 8 s or more; meanwhile a real `flock L true` waits
#     ~4 s for a lock a shell holds (lib.sh's flock_hang), so the
#     collector is shown to keep real hangs: its <time>-flock-<pid>.json
#     must appear (60 s at most) and its stored diagnosis name the holder.
#     Once that is there, the loop has run 8 s and argusd has no save
#     pending or under way (argus status), no file *-monloop-* may be in
#     the hang dir (argusd.log and `argus status` are logged);
#  2. offline: `argus record` of the same loop for ~5 s (it ends by
#     itself), then `argus hangs FILE --json` (no --pid) must list no hang
#     of comm monloop (the listing is logged).
# Checks 1 and 2 of the loop both run; the test fails at the end with
# whichever failed (a check that would make the test vacuous fails at once).
#
# Ground truth comes from the harness, not from argus: the loop logs each
# round (its number, CLOCK_MONOTONIC ns at its start, the ns its work
# took), from which the test checks that it ran the whole time, never
# stalled (no gap of 0.5 s between two rounds) and that its work was short;
# the flock's pids and the lock holder's come from the shell.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

PY=/usr/bin/python3
[ -x $PY ] || fail "needs $PY"
command -v flock >/dev/null || fail "needs flock (util-linux)"
HD=$T/hangs
L=$T/lock
# the comm of a process is the name it was exec'd by
ln -s $PY "$T/monloop"

cat >"$T/monloop.py" <<'PY'
# monloop.py LOG SECONDS: a monitoring loop (0 s: forever).  Each round:
# read three /proc files, write one line to LOG, sleep 0.1 s.  LOG gets
# "round N start_ns work_ns" per round (the harness's ground truth).
import os, sys, time
log, secs = sys.argv[1], float(sys.argv[2])
fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
os.write(fd, f"pid {os.getpid()}\n".encode())
end = time.monotonic() + secs if secs > 0 else None
n = 0
while end is None or time.monotonic() < end:
    t0 = time.monotonic_ns()
    vals = []
    for p in ("/proc/loadavg", "/proc/self/stat", "/proc/meminfo"):
        f = open(p, "rb")
        vals.append(f.read())
        f.close()
    load = vals[0].split()[0].decode()
    rss = vals[1].split()[23].decode()
    free = [l for l in vals[2].split(b"\n") if l.startswith(b"MemAvailable:")][0].split()[1].decode()
    n += 1
    os.write(fd, f"round {n} {t0} {time.monotonic_ns() - t0} load={load} rss={rss} avail={free}\n".encode())
    time.sleep(0.1)
os.close(fd)
PY

# loop_truth LOG: checks the loop's own log; sets ROUNDS, SPAN_S (first
# to last round start) and prints a summary line.
loop_truth() {
	local out
	out=$($PY - "$1" <<'EOF'
import sys
rs = [l.split() for l in open(sys.argv[1]) if l.startswith("round ")]
if len(rs) < 2:
    print(f"BAD only {len(rs)} rounds"); sys.exit(0)
starts = [int(r[2]) for r in rs]
works = [int(r[3]) for r in rs]
gaps = [b - a for a, b in zip(starts, starts[1:])]
span = (starts[-1] - starts[0]) / 1e9
print(f"ROUNDS={len(rs)} SPAN_S={span:.2f} MAX_GAP_MS={max(gaps) / 1e6:.1f} MAX_WORK_MS={max(works) / 1e6:.1f}")
EOF
)
	printf '%s\n' "$out"
}
# loop_ok SUMMARY MIN_S: the loop ran MIN_S s or more, never stalled, its work short
loop_ok() {
	echo "$1" | $PY -c '
import sys
d = dict(kv.split("=") for kv in sys.stdin.read().split() if "=" in kv)
ok = float(d.get("SPAN_S", 0)) >= float(sys.argv[1]) and float(d.get("MAX_GAP_MS", 1e9)) < 500 \
    and float(d.get("MAX_WORK_MS", 1e9)) < 100
sys.exit(0 if ok else 1)' "$2"
}

BAD=()  # the two checks of the loop (live, offline): both run, the test fails at the end
start_collector --dir "$T/ring" --size 128M --no-watch-interactive --hang-dir "$HD" \
	--watch monloop --watch flock

# ---- 1: live ----
"$T/monloop" "$T/monloop.py" "$T/mon_live.log" 0 >"$T/mon_live.out" 2>&1 &
MON=$!
E2E_PIDS+=("$MON")
sleep 1
kill -0 "$MON" 2>/dev/null || fail "the monitoring loop died" "$T/mon_live.out"
[ "$(cat /proc/$MON/comm)" = monloop ] || fail "the loop's comm is $(cat /proc/$MON/comm), not monloop"

flock_hang 4 "$L"
log "flock $WAITER waited $FLOCK_WAIT_MS ms for the lock of $HOLDERS; the loop $MON runs"
[ "$FLOCK_WAIT_MS" -ge 3000 ] || fail "flock waited only $FLOCK_WAIT_MS ms (ground truth: no real hang)"

end=$((SECONDS + 60))
until ls "$HD"/*-flock-"$WAITER".json >/dev/null 2>&1; do
	if [ $SECONDS -ge $end ]; then
		{ ls -la "$HD"; echo "---- argusd.log ----"; cat "$ARGUS_RUN_DIR/argusd.log"; "$ARGUS" status; } >"$T/hd.ls" 2>&1
		fail "argusd kept no snapshot of flock $WAITER in 60 s (the collector does not keep real hangs: the test would be vacuous)" "$T/hd.ls" 80
	fi
	sleep 0.2
done
J=$(ls "$HD"/*-flock-"$WAITER".json)
$PY - "$J" "$WAITER" "$HOLDERS" <<'EOF' || fail "the stored diagnosis of flock $WAITER does not name the holder ($HOLDERS)" "$J"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["pid"] == int(sys.argv[2]) and d["comm"] == "flock", d
cul = (d.get("diagnosis") or {}).get("culprit") or {}
assert cul.get("pid") in [int(x) for x in sys.argv[3].split()], (cul, d.get("diagnose_error"))
print(f"    {d['live']}; culprit {cul.get('comm')} {cul.get('pid')} ({cul.get('rule')})", file=sys.stderr)
EOF
log "kept: $(basename "$J"), culprit the holder"

# the loop has run 8 s or more (its own log says so)
end=$((SECONDS + 30))
while :; do
	TRUTH=$(loop_truth "$T/mon_live.log")
	loop_ok "$TRUTH" 8 && break
	[ $SECONDS -lt $end ] || fail "the monitoring loop did not run 8 s without stalling: $TRUTH" "$T/mon_live.log"
	sleep 0.5
done
log "the loop's own log: $TRUTH"
# argusd has nothing pending or under way (pending 0, and every hang seen
# kept, failed or rejected): a save of the loop queued behind flock's, or
# under way, would otherwise go unseen
# hang_counters: "seen kept failed rejected pending" from the status line
# `hangs seen N, kept N, removed N, failed N[, rejected N], pending N; ...`
hang_counters() {
	sed -n 's/^hangs \+//p' "$T/status.out" | sed 's/;.*//' | $PY -c '
import re, sys
c = {k: int(v) for v, k in ((m.group(2), m.group(1)) for m in re.finditer(r"(\w+) (\d+)", sys.stdin.read()))}
if not {"seen", "kept", "failed", "pending"} <= c.keys():
    sys.exit(1)
print(c["seen"], c["kept"], c["failed"], c.get("rejected", 0), c["pending"])'
}
end=$((SECONDS + 60))
while :; do
	"$ARGUS" status >"$T/status.out" 2>&1 || fail "argus status failed" "$T/status.out"
	settled=$(hang_counters) ||
		fail "argus status has no 'hangs seen N, kept N, ..., failed N, ..., pending N' line" "$T/status.out"
	read -r s_seen s_kept s_failed s_rej s_pend <<<"$settled"
	[ "$s_pend" = 0 ] && [ "$s_seen" = $((s_kept + s_failed + s_rej)) ] && break
	[ $SECONDS -lt $end ] || fail "argusd still has saves pending or under way after 60 s" "$T/status.out"
	sleep 0.5
done
kill -0 "$MON" 2>/dev/null || fail "the monitoring loop died" "$T/mon_live.out"
TRUTH=$(loop_truth "$T/mon_live.log")
log "the loop's own log now: $TRUTH"
log "argus status: $(grep -E '^(hangs|watching)' "$T/status.out" | tr -s ' ' | paste -sd ';')"
# (a live report of the loop that the full model rejected is not kept:
# argusd's log says so, for the reader)
grep monloop "$ARGUS_RUN_DIR/argusd.log" 2>/dev/null | sed 's/^/    argusd.log: /' >&2
ls "$HD" >"$T/hd.ls"
log "$HD holds: $(tr '\n' ' ' <"$T/hd.ls")"
if grep -q -- '-monloop-' "$T/hd.ls"; then
	{
		echo "---- $HD ----"; cat "$T/hd.ls"
		echo "---- argusd.log, lines naming monloop ----"; grep monloop "$ARGUS_RUN_DIR/argusd.log"
		for j in "$HD"/*-monloop-*.json; do
			[ -f "$j" ] || continue
			echo "---- $(basename "$j"): live view, diagnosis's hang and verdict ----"
			$PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("live:", d.get("live"))
dg = d.get("diagnosis") or {}
print("hang:", dg.get("hang")); print("verdict:", dg.get("verdict"))
print("culprit:", {k: (dg.get("culprit") or {}).get(k) for k in ("pid", "tid", "comm", "rule")})' "$j"
		done
		echo "---- argus status ----"; cat "$T/status.out"
	} >"$T/mon_kept.txt" 2>&1
	# (the offline check runs too: the test fails at the end with both)
	BAD+=("live: argusd kept the monitoring loop $MON as a hang (ground truth: $TRUTH)")
	log "FAIL: ${BAD[-1]}; evidence:"
	head -n 60 "$T/mon_kept.txt" | sed 's/^/    /' >&2
else
	log "live: the loop ran $(sed -n 's/.*SPAN_S=\([0-9.]*\).*/\1/p' <<<"$TRUTH") s and was not kept; flock $WAITER was"
fi
kill "$MON" 2>/dev/null; wait "$MON" 2>/dev/null

# ---- 2: offline ----
timeout -k 5 60 "$ARGUS" record -o "$T/mon.argus" -- "$T/monloop" "$T/monloop.py" "$T/mon_rec.log" 5 \
	>"$T/mon_rec.out" 2>"$T/mon_rec.err" || fail "argus record of the loop failed" "$T/mon_rec.err"
log "recorded: $(tail -n 1 "$T/mon_rec.err")"
TRUTH2=$(loop_truth "$T/mon_rec.log")
loop_ok "$TRUTH2" 4.5 || fail "the recorded loop did not run ~5 s without stalling: $TRUTH2" "$T/mon_rec.log"
MON2=$(sed -n 's/^pid //p' "$T/mon_rec.log")
log "the recorded loop $MON2, its own log: $TRUTH2"
timeout 120 "$ARGUS" hangs "$T/mon.argus" --json >"$T/mon_hangs.json" 2>"$T/mon_hangs.err" ||
	fail "argus hangs $T/mon.argus --json failed" "$T/mon_hangs.err"
timeout 120 "$ARGUS" hangs "$T/mon.argus" >"$T/mon_hangs.txt" 2>&1
log "argus hangs $T/mon.argus:"
sed 's/^/    /' "$T/mon_hangs.txt" | head -n 30 >&2
if ! $PY - "$T/mon_hangs.json" "$MON2" <<'EOF' >"$T/mon_hangs.check" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
hs = d.get("hangs") or []
print(f"{len(hs)} hang(s): " + ", ".join(f"{h.get('comm')} {h.get('pid')}/{h.get('tid')} {h.get('kind')} "
      f"{h.get('duration_ns', 0) // 1000000} ms" for h in hs))
mine = [h for h in hs if h.get("comm") == "monloop" or h.get("pid") == int(sys.argv[2])]
for h in mine:
    print("the loop's:", json.dumps(h))
sys.exit(1 if mine else 0)
EOF
then
	BAD+=("offline: argus hangs lists the monitoring loop $MON2 as hung (ground truth: $TRUTH2)")
	log "FAIL: ${BAD[-1]}:"
	sed 's/^/    /' "$T/mon_hangs.check" >&2
else
	log "offline: $(head -n 1 "$T/mon_hangs.check")"
fi
if [ ${#BAD[@]} -gt 0 ]; then
	printf '%s\n' "${BAD[@]}" >"$T/bad.txt"
	fail "the monitoring loop was taken for a hang (${#BAD[@]} of 2 checks)" "$T/bad.txt"
fi
pass "a monitoring loop (reads, a log line, sleep 0.1 s) is not a hang: argusd kept flock $WAITER and not the loop; argus hangs lists no hang of it"
