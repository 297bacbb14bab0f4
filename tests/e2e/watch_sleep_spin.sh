#!/usr/bin/env bash
# watch_sleep_spin.sh - the data-flag workflow on a sleep-retry spin
# (issue 13 §8: the third spin shape, beside case_flag_spin's yield loop
# and watch_busy_spin's pure busy spin), diagnosed to its real culprit:
#   1. a private collector (argus start);
#   2. spin_sleep runs: its main thread checks config_ready and sleeps
#      5 ms between checks; its loader thread sets the flag after 6 s;
#   3. while it spins, `argus flag --pid --watch` steps it through the
#      sleeps, finds the flag and arms `argus watch` on it, naming the
#      stepped thread as the reader;
#   4. after the flag is set and the app ends: argus save, argus diagnose
#      --pid --json.
# Asserted against the app's ground truth (printed at its start):
#   - argus flag's address is FLAG_ADDR, symbol config_ready;
#   - the saved trace has the loader's write, naming the reader, and a
#     dataflag edge;
#   - the hang is the main thread's, kind yield (a sleep-retry loop is
#     many short waits, not one long one);
#   - the culprit is the loader (WRITER_TID), rule dataflag, and the JSON's
#     flag is FLAG_ADDR written by it, the write that ended this hang
#     (ended_hang: no normal run's write was watched): not the spinning
#     thread itself, which is what it was before the hang's own write was
#     followed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/step_lib.sh"
e2e_init "$1"
need_hw_watchpoints   # the writes are recorded by hardware watchpoints

start_collector --dir "$T/ring" --size 256M --no-watch-interactive
start_app spin_sleep 6
sleep 1         # a second of spinning before the flag is looked for
timeout -k 5 30 "$ARGUS" flag --pid "$APP_PID" --json --watch >"$T/flag.json" 2>"$T/flag.err" ||
	fail "argus flag --pid $APP_PID --watch failed" "$T/flag.err"
log "argus flag: $(cat "$T/flag.json")"
not_traced "$APP_PID"
OUT=$APP_OUT
[ "$(jget "$T/flag.json" 'j["flag"]["addr"]')" = "$(( $(kv FLAG_ADDR) ))" ] ||
	fail "argus flag's address is not the app's FLAG_ADDR $(kv FLAG_ADDR)" "$T/flag.json"
[ "$(jget "$T/flag.json" 'j["flag"]["symbol"]')" = config_ready ] ||
	fail "argus flag's symbol is not config_ready" "$T/flag.json"
wait "$APP_PID" || fail "spin_sleep did not end normally after the flag was set" "$APP_OUT.err"

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
dump_to "$T/s.argus" "$T/s.dump"
SPIN=$(kv SPIN_TID)
WRITER=$(kv WRITER_TID)
grep -E ": hwwatch .* reader=$SPIN\$" "$T/s.dump" >"$T/writes.txt" || true
[ -s "$T/writes.txt" ] || fail "no write of the watched flag names reader $SPIN in the saved trace" "$T/s.dump"
log "$(wc -l <"$T/writes.txt") watched write(s), naming reader $SPIN"
"$ARGUS" graph "$T/s.argus" --stats >"$T/stats" 2>&1 || fail "argus graph --stats failed" "$T/stats"
grep -qE '^  dataflag +[1-9]' "$T/stats" || fail "the saved trace's graph has no dataflag edge" "$T/stats"

"$ARGUS" diagnose "$T/s.argus" --pid "$(kv SPIN_PID)" --json >"$T/d.json" 2>"$T/d.err" ||
	fail "argus diagnose --pid $(kv SPIN_PID) --json exited $?" "$T/d.err"
"$ARGUS" diagnose "$T/s.argus" --pid "$(kv SPIN_PID)" >"$T/d.txt" 2>&1 </dev/null || true
cat "$T/writes.txt" >>"$T/d.txt"
"$PY" - "$T/d.json" "$SPIN" "$WRITER" "$(kv FLAG_ADDR)" <<'PY' || fail "the sleep-retry hang's diagnosis does not match the ground truth" "$T/d.txt" 80
import json, sys
d = json.load(open(sys.argv[1]))
spin, writer, addr = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4], 16)
from truth import check, done
h = d["hang"]
check(h["tid"] == spin, f"hang thread {h['tid']} is the spinning {spin}")
check(h["kind"] == "yield", f"hang kind {h['kind']} is yield")
check(h["end_ns"] - h["start_ns"] >= 3_000_000_000, f"hang lasts {(h['end_ns'] - h['start_ns']) / 1e9:.2f} s (the spin: ~6 s)")
c = d["culprit"]
check(c is not None, "a culprit is named")
if c:
    check(c["tid"] == writer, f"culprit {c['comm']} {c['tid']} is the loader {writer}")
    check(c["rule"] == "dataflag", f"culprit rule {c['rule']} is dataflag")
f = d.get("flag")
check(f is not None and f["addr"] == addr and f["writer_tid"] == writer,
      f"flag {f} is {addr:#x} written by {writer}")
check(f is not None and f.get("ended_hang") is True,
      "the write followed is the one that ended this hang (no normal run's write was watched)")
done()
PY
log "$(grep -E '^(hang|flag|path|culprit|verdict)' "$T/d.txt" | sed 's/^/  /')"
pass "sleep-retry spin: argus flag --watch -> the hang is diagnosed to the loader thread by the dataflag rule"
