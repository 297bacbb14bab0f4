#!/usr/bin/env bash
# watch_busy_spin.sh - a pure busy spin on a heap flag, diagnosed to its
# real culprit two hops away (issue 13 §5/§8), by the documented workflow:
#   1. a private collector (argus start);
#   2. busy_spin_reply runs: its UI thread (mixer) spins with `pause` --
#      no syscall -- on job->replies, a heap counter its reply_reader
#      thread bumps when audio_server (another process) replies; for the
#      'H' inputs the reply comes 3 s late: two busy hangs;
#   3. during the first hang, `argus flag --pid --tid` finds the flag's
#      address on the spinning thread (nothing from the symbol table:
#      the flag is on the heap);
#   4. `argus watch --pid --addr --len --reader` on it, naming the thread
#      argus flag stepped: a busy spin makes no syscall, so only the name
#      tells the graph who waits for the writes;
#   5. the normal inputs and the second hang run under the watch; argus
#      save, argus diagnose --at (inside the second hang) --json.
# Asserted against the app's ground truth (printed at its end):
#   - argus flag's address is FLAG_ADDR, in [heap];
#   - the saved trace's writes name the reader (argus dump: reader=UI_TID)
#     and its graph has dataflag edges;
#   - the hang is the second one (overlaps HANG_START_NS..HANG_END_NS),
#     kind busy;
#   - the culprit is audio_server (CULPRIT_PID/TID/COMM, kind
#     CULPRIT_KIND), rule dataflag, culprit + chain start with CHAIN; the
#     flag is FLAG_ADDR written by FLAG_WRITER_TID; the path goes
#     UI <-dataflag- reply_reader <-message- audio_server; no next steps.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/step_lib.sh"
e2e_init "$1"
need_hw_watchpoints   # the writes are recorded by hardware watchpoints
APP=$APPS/busy_spin_reply
[ -x "$APP" ] || fail "no $APP (build first)"

start_collector --dir "$T/ring" --size 256M --no-watch-interactive
"$APP" >"$T/app.out" 2>"$T/app.err" &
P=$!
E2E_PIDS+=("$P")
# the first 'H' input comes at 0.75 s and its spin lasts 3 s; the first
# normal input whose write the watch must see comes 3.3 s after it
wait_spinning "$P"
timeout -k 5 30 "$ARGUS" flag --pid "$P" --tid "$P" --json >"$T/flag.json" 2>"$T/flag.err" ||
	fail "argus flag --pid $P --tid $P failed" "$T/flag.err"
ADDR=$(printf '0x%x' "$(jget "$T/flag.json" 'j["flag"]["addr"]')")
LEN=$(jget "$T/flag.json" 'j["flag"]["size"]')
MAP=$(jget "$T/flag.json" 'j["flag"]["mapping"]')
log "argus flag: $ADDR ($LEN bytes, $MAP+$(jget "$T/flag.json" 'j["flag"]["offset"]'))"
"$ARGUS" watch --pid "$P" --addr "$ADDR" --len "$LEN" --reader "$P" >"$T/w.out" 2>"$T/w.err" ||
	fail "argus watch --pid $P --addr $ADDR --len $LEN --reader $P failed" "$T/w.err"
log "$(cat "$T/w.out")"
grep -q "; reader thread $P\$" "$T/w.out" || fail "argus watch does not say it armed reader $P" "$T/w.out"
wait "$P" || fail "busy_spin_reply failed" "$T/app.err"
OUT=$T/app.out
[ "$((ADDR))" = "$(( $(kv FLAG_ADDR) ))" ] || fail "argus flag said $ADDR, the app's flag is $(kv FLAG_ADDR)"
[ "$MAP" = "[heap]" ] || fail "argus flag places the flag in '$MAP', the app's is in [heap]" "$T/flag.json"

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
dump_to "$T/s.argus" "$T/s.dump"
UI=$(kv UI_TID)
grep -E ": hwwatch .* reader=$UI\$" "$T/s.dump" >"$T/writes.txt" || true
[ -s "$T/writes.txt" ] || fail "no write of the watched flag names reader $UI in the saved trace" "$T/s.dump"
log "$(wc -l <"$T/writes.txt") watched writes, each naming reader $UI"
"$ARGUS" graph "$T/s.argus" --stats >"$T/stats" 2>&1 || fail "argus graph --stats failed" "$T/stats"
grep -qE '^  dataflag +[1-9]' "$T/stats" || fail "the saved trace's graph has no dataflag edge" "$T/stats"
log "graph: $(grep -E 'dataflag' "$T/stats")"

AT=$(( ($(kv HANG_START_NS) + $(kv HANG_END_NS)) / 2 ))
"$ARGUS" diagnose "$T/s.argus" --pid "$(kv UI_PID)" --at "$AT" --json >"$T/d.json" 2>"$T/d.err" ||
	fail "argus diagnose --at $AT --json exited $?" "$T/d.err"
"$ARGUS" diagnose "$T/s.argus" --pid "$(kv UI_PID)" --at "$AT" >"$T/d.txt" 2>&1 </dev/null || true
cat "$T/writes.txt" >>"$T/d.txt"

"$PY" - "$T/d.json" "$OUT" <<'PY' || fail "the busy hang's diagnosis does not match the ground truth" "$T/d.txt" 80
import sys
from truth import check, check_culprit, check_flag, done, load_json, load_kv
d, kv = load_json(sys.argv[1]), load_kv(sys.argv[2])
h = d["hang"]
hs, he = int(kv["HANG_START_NS"]), int(kv["HANG_END_NS"])
check(h["tid"] == int(kv["UI_TID"]), f"hang thread {h['tid']} is the UI {kv['UI_TID']}")
check(h["start_ns"] < he and h["end_ns"] > hs, f"hang {h['start_ns']}..{h['end_ns']} overlaps {hs}..{he}")
check(h["kind"] == kv["EXPECT_KIND"] == "busy", f"hang kind {h['kind']} is busy")
check_culprit(d, kv, "dataflag")
check_flag(d, kv)
steps = [(p["tid"], p["edge"]) for p in d["path"]]
check(steps[:3] == [(int(kv["UI_TID"]), None), (int(kv["WORKER_TID"]), "dataflag"),
                    (int(kv["CULPRIT_TID"]), "message")],
      f"path {steps[:3]}: UI <-dataflag- reply_reader <-message- audio_server")
check(d["next_steps"] == [], "no next steps: the writes were there")
done()
PY
log "$(grep -E '^(hang|flag|path|culprit|verdict)' "$T/d.txt" | sed 's/^/  /')"
pass "argus flag in the first busy hang -> argus watch --reader -> the second hang is diagnosed to $(kv CULPRIT_COMM) by the dataflag rule, via reply_reader"
