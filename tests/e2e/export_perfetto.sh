#!/bin/bash
# e2e: `argus export --format perfetto` on a real recording of the pipe
# ping-pong (tests/apps/pipe_pingpong: parent P and child C bounce bytes
# over two pipes).  Asserts:
#   - OUT is valid JSON (python3 -m json.tool and json.load), mode 0600,
#     and no temporary file is left next to it;
#   - a "traceEvents" list with "X" slices on both P's and C's threads;
#   - at least one flow pair ("s" and "f" with the same id) from P's pid
#     to C's pid, and every flow end lies strictly inside an "X" slice of
#     its thread (else Perfetto cannot bind the arrow);
#   - a window (--from/--to) only draws slices inside it;
#   - an unknown format is a usage error (exit 2) naming the known ones,
#     and a failed export leaves no OUT behind.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
command -v python3 >/dev/null || fail "python3 is needed to check the JSON"

record pp -- "$APPS/pipe_pingpong" 20 2000
export P=$(kv PARENT_PID) C=$(kv CHILD_PID) PT=$(kv PARENT_TID) CT=$(kv CHILD_TID)
log "parent $P/$PT, child $C/$CT"

mkdir -p "$T/out"
J=$T/out/pp.json
timeout -k 5 120 "$ARGUS" export "$TRACE" --format perfetto -o "$J" >"$T/export.out" 2>"$T/export.err" ||
	fail "argus export exited $?" "$T/export.err"
log "$(tail -n 1 "$T/export.err")"
[ -s "$J" ] || fail "argus export wrote no $J" "$T/export.err"
python3 -m json.tool "$J" >/dev/null 2>"$T/jsontool.err" || fail "$J is not valid JSON" "$T/jsontool.err"
mode=$(stat -c %a "$J")
[ "$mode" = 600 ] || fail "$J has mode $mode, not 600 (traces are private)"
left=$(ls -A "$T/out" | grep -v '^pp\.json$' || true)
[ -z "$left" ] || fail "files left next to the output: $left"

python3 - "$J" <<'EOF' || fail "the Perfetto JSON does not show the ping-pong (see above)"
import json, os, sys

P, C, PT, CT = (int(os.environ[k]) for k in ("P", "C", "PT", "CT"))
with open(sys.argv[1]) as f:
    d = json.load(f)
ev = d["traceEvents"]
bad = 0
xs = [e for e in ev if e["ph"] == "X"]
for who, tid in (("parent", PT), ("child", CT)):
    n = sum(1 for e in xs if e["tid"] == tid)
    print(f"ok: {n} X slices on the {who} thread {tid}" if n else
          f"FAIL: no X slice on the {who} thread {tid}", file=sys.stderr)
    bad |= not n
names = [e for e in ev if e["ph"] == "M" and e["name"] == "thread_name" and e["tid"] in (PT, CT)]
if len(names) != 2:
    print(f"FAIL: thread_name metadata for {PT} and {CT}: {names}", file=sys.stderr)
    bad = 1
starts = {e["id"]: e for e in ev if e["ph"] == "s"}
ends = {e["id"]: e for e in ev if e["ph"] == "f"}
pairs = [(starts[i], ends[i]) for i in starts if i in ends]
pc = [(s, f) for s, f in pairs if s["pid"] == P and f["pid"] == C]
print(f"{len(pairs)} flow pairs, {len(pc)} from the parent to the child", file=sys.stderr)
if not pc:
    print("FAIL: no flow (s -> f, same id) from the parent's pid to the child's", file=sys.stderr)
    for s, f in pairs[:12]:
        print(f"    {s} -> {f}", file=sys.stderr)
    bad = 1
else:
    print(f"ok: e.g. {pc[0][0]} -> {pc[0][1]}", file=sys.stderr)
by_tid = {}
for e in xs:
    by_tid.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
unbound = [e for s, f in pairs for e in (s, f)
           if not any(a < e["ts"] < b for a, b in by_tid.get(e["tid"], []))]
if unbound:
    print(f"FAIL: {len(unbound)} flow ends outside every slice of their thread, e.g.", file=sys.stderr)
    for e in unbound[:12]:
        print(f"    {e}", file=sys.stderr)
    bad = 1
if set(e["id"] for e in ev if e["ph"] in "sf") != set(starts) | set(ends) or \
        len(starts) != len(ends):
    print("FAIL: a flow start without its end (or the reverse)", file=sys.stderr)
    bad = 1
if d.get("displayTimeUnit") != "ns":
    print("FAIL: no displayTimeUnit", file=sys.stderr)
    bad = 1
sys.exit(bad)
EOF

# A window: the middle third of the ping-pong, from the parent's slices.
read -r FROM TO < <(python3 - "$J" <<'EOF'
import json, os, sys
xs = [e for e in json.load(open(sys.argv[1]))["traceEvents"]
      if e["ph"] == "X" and e["tid"] == int(os.environ["PT"])]
a, b = min(e["ts"] for e in xs), max(e["ts"] + e["dur"] for e in xs)
print(f"{(a + (b - a) / 3) / 1e6:.9f} {(a + 2 * (b - a) / 3) / 1e6:.9f}")
EOF
)
W=$T/out/win.json
timeout -k 5 120 "$ARGUS" export "$TRACE" -o "$W" --from "$FROM" --to "$TO" >/dev/null 2>"$T/win.err" ||
	fail "argus export --from $FROM --to $TO exited $?" "$T/win.err"
python3 - "$W" "$FROM" "$TO" <<'EOF' || fail "the export --from $FROM --to $TO is wrong (see above)"
import json, os, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
lo, hi = float(sys.argv[2]) * 1e6, float(sys.argv[3]) * 1e6
xs = [e for e in ev if e["ph"] == "X"]
# clipped to the window; a zero-length segment at its end is drawn 1 us long
out = [e for e in xs if e["ts"] < lo - 0.002 or e["ts"] + e["dur"] > hi + 1.002]
for e in out[:12]:
    print(f"    outside [{lo}, {hi}] us: {e}", file=sys.stderr)
mine = [e for e in xs if e["tid"] == int(os.environ["PT"])]
print(f"{len(xs)} slices in [{lo:.3f}, {hi:.3f}] us, {len(mine)} of the parent", file=sys.stderr)
sys.exit(1 if out or not mine else 0)
EOF

expect_clean_error 'unknown --format.*perfetto' "$ARGUS" export "$TRACE" --format svg -o "$T/out/x.json"
[ "$ERR_RC" = 2 ] || fail "an unknown format exited $ERR_RC, not 2 (usage)"
expect_clean_error '/nonexistent' "$ARGUS" export /nonexistent.argus -o "$T/out/y.json"
[ ! -e "$T/out/x.json" ] && [ ! -e "$T/out/y.json" ] || fail "a failed export left an output file"
left=$(ls -A "$T/out" | grep -v '^\(pp\|win\)\.json$' || true)
[ -z "$left" ] || fail "files left next to the outputs: $left"
pass "perfetto export: valid JSON (0600), slices on both threads, parent->child flows bound inside slices"
