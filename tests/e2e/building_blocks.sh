#!/bin/bash
# e2e: the diagnosis's building blocks as commands (issue 4): argus show,
# similar, slice and diff on a real recording of case study 1.
#
# 1. argus record -o T -- tests/apps/case_circular (the UI's main thread
#    waits on a condition variable for ime_worker; in the hang it times
#    out twice, 1.5 s each);
# 2. argus diagnose T --pid UI --json gives the hang segment H, the normal
#    segment N and the normal wake-up path;
# 3. assert, against the app's ground truth:
#    - show H names the UI thread and its futex wait, on the condition
#      variable the app printed (DONE_COND_ADDR);
#    - similar H lists N among its candidates;
#    - slice of path[1] (ime_worker's segment) reaches a UI segment, and
#      --pick takes the alternative it is given;
#    - diff N H: the hang's successor was woken by the UI thread's own
#      timer, the normal's by ime_worker (WORKER_TID);
#    - every --json output parses; bad ids exit 2 naming the range.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
command -v python3 >/dev/null || fail "python3 is needed to check the JSON"
[ -x "$APPS/case_circular" ] || fail "no app $APPS/case_circular (build first)"

record cc -- "$APPS/case_circular"
UI=$(kv UI_PID)
UI_TID=$(kv UI_TID)
UI_COMM=$(kv UI_COMM)
WORKER=$(kv WORKER_TID)
COND=$(kv DONE_COND_ADDR)

# run NAME ARGS...: argus ARGS > $T/NAME (stderr $T/NAME.err); must exit 0.
run() {
	local name=$1
	shift
	timeout -k 5 60 "$ARGUS" "$@" >"$T/$name" 2>"$T/$name.err" ||
		fail "argus $* exited $?" "$T/$name.err"
}
# json NAME ARGS...: run with --json, and the output must parse.
json() {
	local name=$1
	shift
	run "$name" "$@" --json
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/$name" 2>"$T/$name.pyerr" ||
		fail "argus $* --json is not JSON: $(tail -n 1 "$T/$name.pyerr")" "$T/$name"
}
# py FILE CODE: CODE with d = the parsed FILE; a false assertion fails.
py() {
	local file=$1 code=$2
	python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$code" "$file" 2>"$T/py.err" || fail "$(tail -n 1 "$T/py.err")" "$file" 60
}

json d.json diagnose "$TRACE" --pid "$UI"
read -r H N W < <(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
p = d["path"]
print(d["hang_segment"], d["normal"]["segment"] if d["normal"] else -1,
      p[1]["segment"] if len(p) > 1 else -1)' "$T/d.json")
log "diagnose: hang segment #$H, normal #$N, path[1] #$W"
[ "$H" -ge 0 ] && [ "$N" -ge 0 ] && [ "$W" -ge 0 ] ||
	fail "diagnose gave no hang segment, normal segment or path" "$T/d.json"
py "$T/d.json" "assert d['path'][1]['tid'] == $WORKER, \
  f\"path[1] is {d['path'][1]['comm']}/{d['path'][1]['tid']}, not ime_worker/$WORKER\""

# show: the UI thread, blocked in futex on the app's condition variable
run show.txt show "$TRACE" "$H"
json show.json show "$TRACE" "$H"
py "$T/show.json" "
assert d['segment'] == $H and d['tid'] == $UI_TID and d['comm'] == '$UI_COMM', \
  f\"show #$H: {d['comm']}/{d['tid']}, want $UI_COMM/$UI_TID\"
w = d['wait']
assert w and w['syscall'] == 'futex', f'show #$H: wait {w}, want futex'
cond = int('$COND', 16)
assert cond <= w['futex_uaddr'] < cond + 48, \
  f\"futex word {w['futex_uaddr']:#x} is not in the condition variable at {cond:#x}\"
assert d['events'] and d['in_edges'], 'show: no events or in-edges'"
grep -q "^segment #$H: $UI_COMM $UI/$UI_TID " "$T/show.txt" ||
	fail "show #$H does not name $UI_COMM $UI/$UI_TID" "$T/show.txt"
grep -q "ended *wait in futex on futex word 0x" "$T/show.txt" ||
	fail "show #$H does not say it waited in futex" "$T/show.txt"
log "show: $(sed -n 's/^  ended *//p' "$T/show.txt")"

# similar: the normal run is a candidate (by the wait's kind when the
# diagnosis had to fall back to that: no run outside the hang waited on the
# same condition variable word, when the worker's reply was always there
# before the UI looked)
KIND=
[ "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["normal"]["match"])' "$T/d.json")" = kind ] &&
	KIND=--kind
run similar.txt similar "$TRACE" "$H" $KIND
json similar.json similar "$TRACE" "$H" --max 64 $KIND
py "$T/similar.json" "
segs = [c['segment'] for c in d['candidates']]
assert $N in segs, f'similar #$H: the normal #$N is not among {segs}'
assert all(c['tid'] == $UI_TID for c in d['candidates']), 'similar: another thread'"
grep -q "same thread" "$T/similar.txt" || fail "similar does not say what similar means" "$T/similar.txt"
# by kind, the same-object candidates are candidates too
json similar_kind.json similar "$TRACE" "$H" --max 64 --kind
py "$T/similar_kind.json" "
segs = [c['segment'] for c in d['candidates']]
assert $N in segs, f'similar --kind #$H: the normal #$N is not among {segs}'"
log "similar: #$N is candidate $(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([c["segment"] for c in d["candidates"]].index(int(sys.argv[2])) + 1)' "$T/similar.json" "$N") of $(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["candidates"]))' "$T/similar.json")"

# slice: from ime_worker's segment back to the UI thread
run slice.txt slice "$TRACE" "$W"
json slice.json slice "$TRACE" "$W"
py "$T/slice.json" "
s = d['steps']
assert s[0]['segment'] == $W and s[0]['tid'] == $WORKER, 'slice: step 0 is not #$W'
assert any(x['tid'] == $UI_TID for x in s[1:]), \
  f\"slice #$W never reaches the UI thread: {[(x['segment'], x['comm']) for x in s]}\"
for x in s:
    if x['choices'] >= 2 and x['took']:
        assert len(x['not_taken']) == x['choices'] - 1, 'slice: alternatives not listed'"
grep -q "#[0-9]* $UI_COMM $UI/$UI_TID" "$T/slice.txt" || fail "slice text does not reach the UI thread" "$T/slice.txt"
# --pick: at the first choice point, take the first alternative instead
ALT=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["steps"]
for i, x in enumerate(s):
    if x["choices"] >= 2 and x["took"]:
        a = x["not_taken"][0]
        print(i, a["choice"], a["edge"]["id"])
        break' "$T/slice.json")
if [ -n "$ALT" ]; then
	read -r STEP CHOICE EDGE <<<"$ALT"
	json slice_pick.json slice "$TRACE" "$W" --pick "$CHOICE"
	py "$T/slice_pick.json" "
s = d['steps']
assert len(s) > $STEP + 1 and s[$STEP + 1]['edge']['id'] == $EDGE, \
  'slice --pick $CHOICE did not follow edge $EDGE at step $STEP'
assert s[$STEP]['took'] == $CHOICE and d['picks_used'] == 1, 'slice --pick: took/picks_used'"
	grep -q "choices; took" "$T/slice.txt" || fail "slice text does not show its choice" "$T/slice.txt"
	log "slice: step $STEP had a choice; --pick $CHOICE followed edge $EDGE"
else
	log "slice: no choice point on this path (nothing for --pick to change)"
fi

# diff: the point of it, who woke each one's successor
run diff.txt diff "$TRACE" "$N" "$H"
json diff.json diff "$TRACE" "$N" "$H"
py "$T/diff.json" "
h, n = d['hang']['resumed'], d['normal']['resumed']
assert h['edge'] and h['edge']['type'] == 'timer' and h['own_timer'], \
  f\"hang #$H: its successor was woken by {h['text']}, want its own timer\"
assert n['by'] and n['by']['tid'] == $WORKER, \
  f\"normal #$N: its successor was woken by {n['text']}, want ime_worker $WORKER\"
assert d['same_thread'] and 'own timer' in d['summary'], d['summary']"
grep -q "^=> normally woken by ime_worker ($WORKER) via .*; in the hang, woken by its own timer" \
	"$T/diff.txt" || fail "diff's conclusion does not name ime_worker and the timer" "$T/diff.txt"
log "diff: $(grep '^=>' "$T/diff.txt")"

# bad ids: usage errors (exit 2) that say what is wrong
NSEG=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["vertices"])' "$T/d.json")
expect_clean_error "no segment #999999999: the graph has $NSEG segments" \
	"$ARGUS" show "$TRACE" 999999999
[ "$ERR_RC" -eq 2 ] || fail "show with an id out of range exited $ERR_RC, want 2"
expect_clean_error "no segment #$NSEG: the graph has $NSEG segments \(#0\.\.#$((NSEG - 1))\)" \
	"$ARGUS" diff "$TRACE" "$N" "$NSEG"
[ "$ERR_RC" -eq 2 ] || fail "diff with an id out of range exited $ERR_RC, want 2"
expect_clean_error "'x12' is not a segment id" "$ARGUS" similar "$TRACE" x12
[ "$ERR_RC" -eq 2 ] || fail "similar with a bad id exited $ERR_RC, want 2"
expect_clean_error "missing ID" "$ARGUS" slice "$TRACE"
[ "$ERR_RC" -eq 2 ] || fail "slice without an id exited $ERR_RC, want 2"
expect_clean_error "missing ID_HANG" "$ARGUS" diff "$TRACE" "$N"
[ "$ERR_RC" -eq 2 ] || fail "diff with one id exited $ERR_RC, want 2"
expect_clean_error "cannot open" "$ARGUS" show "$T/nope.argus" 1
[ "$ERR_RC" -eq 1 ] || fail "show of a missing trace exited $ERR_RC, want 1"

pass "show, similar, slice and diff agree with diagnose and the app's ground truth"
