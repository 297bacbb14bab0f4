#!/bin/bash
# e2e: `argus instrument --via uprobe` (issue 14 §3, the fallback): the
# kernel records live_item's entries into the collector's trace; argus
# writes no byte (the kernel's uprobe puts its own int3 at the entry).  tests/apps/live_hung, hung, then 6 items.
# Asserts:
#   - the command pins the probe (/sys/fs/bpf/argus-live) and --list shows it;
#   - live_item's bytes are the file's but for the kernel's int3 at +0,
#     and all the file's again after --remove;
#   - the saved trace has exactly 6 live_hit records of the worker, with
#     fn = live_item's address, as=begin, and the 6 item pointers (one
#     array of longs: 8 bytes apart); the output is right;
#   - in the graph each hit is a work_begin: the worker's segments are cut
#     there (at least 6 start at a work item);
#   - --remove unpins it: 3 more items add no record;
#   - without a collector: one clear error, nothing pinned.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/live_lib.sh"
APP=$APPS/live_hung
[ -r /sys/bus/event_source/devices/uprobe/type ] || fail "this kernel has no uprobe PMU"
mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 64M --no-watch-interactive

live_start hung "$APP"
# a failing run must not leave its probe pinned: a uprobe is on the file,
# so it would put its int3 into every later process of live_hung
trap 'rc=$?; rm -f /sys/fs/bpf/argus-live/"$LPID"-*; (exit $rc); e2e_cleanup' EXIT
live_wait_line '^READY=1'
OUT=$T/hung.out
WORKER=$(kv WORKER_TID)
live_wait_blocked 2
VADDR=0x$(nm "$APP" | awk '$3 == "live_item" { print $1 }')
ORIG=$(live_file_bytes "$APP" "$VADDR" 8)

"$ARGUS" instrument --pid "$LPID" --func live_item --as begin --via uprobe >"$T/u.out" 2>"$T/u.err" ||
	fail "argus instrument --via uprobe failed" "$T/u.err"
log "$(cat "$T/u.out")"
export ADDR=$(sed -n 's/.* at \(0x[0-9a-f]*\) .*/\1/p' "$T/u.out")
ls /sys/fs/bpf/argus-live/ | has "^$LPID-${ADDR#0x}-" || fail "no pinned probe for $LPID at $ADDR"
"$ARGUS" instrument --pid "$LPID" --list >"$T/list" 2>&1
grep -q "^$ADDR as begin via uprobe" "$T/list" || fail "--list does not show the uprobe" "$T/list"
# the kernel's own breakpoint: an int3 at the entry, the rest untouched
now=$(live_mem "$ADDR" 8)
[ "$now" = "cc${ORIG:2}" ] || fail "with the uprobe live_item is $now; expected cc then the file's ${ORIG:2}"

live_send "work 6"
live_wait_line '^DONE n=6 sum=61$'
sleep 0.3
"$ARGUS" instrument --pid "$LPID" --func live_item --remove --via uprobe >"$T/r.out" 2>"$T/r.err" ||
	fail "--remove --via uprobe failed" "$T/r.err"
ls /sys/fs/bpf/argus-live/ 2>/dev/null | has "^$LPID-" && fail "the probe is still pinned after --remove"
# the kernel frees the link (and takes its int3 out) a moment after the
# last pin goes: from a deferred work item
for _ in $(seq 40); do [ "$(live_mem "$ADDR" 8)" = "$ORIG" ] && break; sleep 0.05; done
[ "$(live_mem "$ADDR" 8)" = "$ORIG" ] || fail "2 s after --remove live_item is $(live_mem "$ADDR" 8), not the file's $ORIG"
live_send "work 3"
live_wait_line '^DONE n=3 sum=8$'
sleep 0.3
"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump"
export PID=$LPID WORKER
check_dump "$T/s.dump" '
PID, WORKER, ADDR = int(ENV["PID"]), int(ENV["WORKER"]), num(ENV["ADDR"])
hits = [e for e in ev if e["type"] == "live_hit" and e["pid"] == PID]
bad = 0
if len(hits) != 6:
	say("FAIL: %d live_hit records of %d, expected 6" % (len(hits), PID)); show(hits); sys.exit(1)
it = []
for e in hits:
	if e["tid"] != WORKER or e["fn"] != ADDR or e["as"] != "begin":
		say("FAIL: wrong record: " + e["line"]); bad = 1
	it.append(e["item"])
for i in range(1, len(it)):
	if it[i] - it[i - 1] != 8:
		say("FAIL: items not 8 bytes apart: " + " ".join(str(x) for x in it)); bad = 1; break
if not bad:
	say("ok: " + hits[0]["line"])
sys.exit(bad)
' || fail "the live_hit records are missing or wrong (see above)"
"$ARGUS" graph "$T/s.argus" --tid "$WORKER" --json >"$T/w.json" 2>"$T/w.err" ||
	fail "argus graph --tid --json failed" "$T/w.err"
/usr/bin/python3 - "$T/w.json" <<'PY' || fail "the worker's segments are not cut at the live hits" "$T/w.json"
import json, os, sys
d = json.load(open(sys.argv[1]))
segs = [x for x in d["nodes"] if x["tid"] == int(os.environ["WORKER"])]
work = [x for x in segs if x["start_reason"] == "work"]
ok = len(work) >= 6
print(("  ok:   " if ok else "  FAIL: ") + f"{len(work)} of the worker's {len(segs)} segments start at a live hit (>= 6)", file=sys.stderr)
sys.exit(not ok)
PY

# no collector: a clear error, nothing pinned
expect_clean_error 'no collector in .*argus start' env ARGUS_RUN_DIR="$T/none" "$ARGUS" instrument --pid "$LPID" --func live_item --as end --via uprobe
ls /sys/fs/bpf/argus-live/ 2>/dev/null | has "^$LPID-" && fail "a refused --via uprobe left a pin"
live_send quit
live_wait_line '^EXIT ok'
live_finish 0
pass "--via uprobe: 6 live_hit records with the items, only the kernel int3, removed cleanly"
