#!/bin/bash
# e2e: `argus dump --json` says what the text dump says (issue 22).
# Records a pipe ping-pong, a futex hand-off and a short sleep run by a
# program whose name holds an ESC byte and non-ASCII UTF-8 (its comm is
# another user's choice), with stacks.  Asserts:
#   - every line of the JSON dump parses as one JSON object, and the last
#     one is the stats;
#   - event by event, the text line (and its frames) rendered back from the
#     JSON fields alone is the text dump's line (dump_json_text.py), and
#     the totals and lost counts agree with the text's "# " lines;
#   - the oddly named program's comm is in the JSON exactly as named, with
#     the ESC escaped as \u001b in the raw JSON (never a raw control byte),
#     while the text escapes it for a terminal;
#   - the same holds with --pid and --tid filters.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

ODD=$'sl\x1bp\xc3\xa9'         # "sl ESC p é": 6 bytes, under the 15 of a comm
cp "$(command -v sleep)" "$T/$ODD"
# (and ~0.3 s on a CPU, so the 49 Hz sampler's events are there on a quiet
# machine too: the ping-pong and the hand-off mostly wait)
record mix -- bash -c '"$1" 20 200 && "$2" 5 200 && "$3" 0.05 && for ((i = 0; i < 300000; i++)); do :; done' \
	mix "$APPS/pipe_pingpong" "$APPS/futex_handoff" "$T/$ODD"
dump_to "$TRACE" "$T/mix.dump" --stacks

python3 -c '
import json, sys
n = 0
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "the JSON dump does not end with a newline"
for i, l in enumerate(lines[:-1]):
	try:
		o = json.loads(l)
	except ValueError as e:
		sys.exit("FAIL: line %d is not JSON (%s): %r" % (i + 1, e, l[:200]))
	if not isinstance(o, dict):
		sys.exit("FAIL: line %d is not an object" % (i + 1))
	n += 1
if "stats" not in json.loads(lines[-2]):
	sys.exit("FAIL: the last line is not the stats")
print("ok: %d JSON lines parse" % n, file=sys.stderr)
' "$T/mix.dump.json" || fail "the JSON dump does not parse line by line" "$T/mix.dump.json"

python3 "$E2E_DIR/dump_json_text.py" "$T/mix.dump" "$T/mix.dump.json" ||
	fail "the JSON dump and the text dump disagree (see above)"

# the odd comm: exact in the JSON, escaped in both outputs' bytes
ODD=$ODD check_dump "$T/mix.dump" '
odd = ENV["ODD"]
types = {e["type"] for e in ev}
for t in ("switch", "waking", "sys_exit", "sys_enter", "sample", "exec"):
	if t not in types:
		say("FAIL: no %s event in the recording (types: %s)" % (t, sorted(types))); sys.exit(1)
mine = [e for e in ev if e["comm"] == odd]
if not mine:
	say("FAIL: no event with the comm %r" % odd); show(e for e in ev if e["type"] == "exec"); sys.exit(1)
if not any(e.get("stack") for e in ev):
	say("FAIL: no event has a stack with --stacks"); sys.exit(1)
say("ok: %d events of %r, %d types; e.g.\n    %s" % (len(mine), odd, len(types), mine[0]["line"]))
' || fail "the JSON dump lacks the recording's events or the odd comm (see above)"
grep -q 'sl\\x1bp' "$T/mix.dump" || fail "the text dump does not escape the ESC of the comm" "$T/mix.dump"
LC_ALL=C grep -q $'\x1b' "$T/mix.dump" "$T/mix.dump.json" && fail "a raw ESC byte reached a dump"
grep -q '"comm":"sl\\u001bp' "$T/mix.dump.json" || fail "the JSON does not escape the ESC as \\u001b" "$T/mix.dump.json"

# filters: the JSON follows the text's --pid / --tid selection
PID=$(kv PARENT_TID)
dump_to "$TRACE" "$T/pid.dump" --pid "$PID"
python3 "$E2E_DIR/dump_json_text.py" "$T/pid.dump" "$T/pid.dump.json" ||
	fail "with --pid $PID the JSON and the text dump disagree (see above)"
dump_to "$TRACE" "$T/tid.dump" --tid "$PID" --stacks
python3 "$E2E_DIR/dump_json_text.py" "$T/tid.dump" "$T/tid.dump.json" ||
	fail "with --tid $PID the JSON and the text dump disagree (see above)"
pass "every JSON line parses; each event's JSON renders back to its text line; the odd comm is exact in JSON, escaped in both"
