#!/bin/bash
# e2e: `argus instrument --as begin --at-return end` (issue 14 §3, "and
# return, where asked"; docs/interposer.md "Return hooks") into a running
# process: each call of the patched function becomes one work item, begun
# at its entry and ended at its return, with no rebuild of the program.
# tests/apps/live_hung: its worker calls live_item(&items[i]) once per
# item ("work N"); the process is hung (poll, futex, pause) when patched.
# Asserts:
#   - the patch says it calls argus_work_end at the return; the results of
#     "work 20" are right (live_item's return value survives the stub);
#   - --list shows the return hook with 0 calls in flight and 20 hits;
#   - the saved trace has, on the worker, 20 work_begin and 20 work_end
#     records, one pair per item (the items: one array, 8 bytes apart),
#     each end after its begin and before the next begin;
#   - --remove puts the file's bytes back and the process goes on right;
#   - refusals: --at-return with --count-only and with --via uprobe, a
#     bad kind, --at-return with --remove;
#   - on a real program and library from Debian: deflate() of libz.so.1
#     (zlib1g, stripped) in a running python3 (tests/apps/live_crc.py,
#     "zip N": zlib.compress then decompress) hooked --as begin
#     --at-return end: 20 round trips are right, the trampoline counted 20
#     calls with 0 in flight after, and the trace has 20 work_begin and 20
#     work_end records that alternate, each end with its begin's item (the
#     z_stream, on python's stack).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/live_lib.sh"
APP=$APPS/live_hung
mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 64M --no-watch-interactive

live_start hung "$APP"
live_wait_line '^READY=1'
live_wait_blocked 2
before=$(live_syscalls)
VADDR=0x$(nm "$APP" | awk '$3 == "live_item" { print $1 }')
ORIG=$(live_file_bytes "$APP" "$VADDR" 8)

expect_clean_error '--at-return needs the patch' "$ARGUS" instrument --pid "$LPID" --func live_item --as begin --at-return end --count-only
expect_clean_error '--at-return needs the patch' "$ARGUS" instrument --pid "$LPID" --func live_item --as begin --at-return end --via uprobe
expect_clean_error '--at-return needs boundary' "$ARGUS" instrument --pid "$LPID" --func live_item --as begin --at-return finish

"$ARGUS" instrument --pid "$LPID" --func live_item --as begin --at-return end >"$T/i.out" 2>"$T/i.err" ||
	fail "argus instrument --as begin --at-return end failed" "$T/i.err"
log "$(cat "$T/i.out")"
grep -q 'calls argus_work_begin(rdi), and at its return argus_work_end(the same item)' "$T/i.out" ||
	fail "the patch does not say it hooks the return" "$T/i.out"
ADDR=$(sed -n 's/.* at \(0x[0-9a-f]*\) .*/\1/p' "$T/i.out")
live_same_blocked "$before"

live_send "work 20"
live_wait_line '^DONE n=20 '
[ "$(sed -n 's/^DONE n=20 sum=//p' "$T/hung.out")" = 2490 ] ||
	fail "wrong result through the return stub" "$T/hung.out"
"$ARGUS" instrument --pid "$LPID" --list >"$T/list" 2>&1 || fail "--list failed" "$T/list"
log "list: $(cat "$T/list")"
grep -q 'live_hung:live_item as begin at-return end (0 in flight) hits 20 ' "$T/list" ||
	fail "--list does not show the return hook, 0 in flight, 20 hits" "$T/list"

sleep 0.3
"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump" --pid "$LPID"
export W=$(kv WORKER_TID "$T/hung.out")
check_dump "$T/s.dump" '
W = int(ENV["W"])
wk = [e for e in ev if e["type"] in ("work_begin", "work_end") and e["tid"] == W]
b = [e for e in wk if e["type"] == "work_begin"]
x = [e for e in wk if e["type"] == "work_end"]
say("worker %d: %d work_begin, %d work_end" % (W, len(b), len(x)))
if len(b) != 20 or len(x) != 20:
	say("FAIL: expected 20 of each"); show(wk); sys.exit(1)
bad = 0
for k in range(20):
	bk, ek = b[k], x[k]
	if bk["item"] != ek["item"]:
		bad = 1; say("FAIL: item %d: begin %d end %d differ" % (k, bk["item"], ek["item"]))
	if ek["ts"] < bk["ts"]:
		bad = 1; say("FAIL: item %d ends before it begins" % k)
	if k < 19 and ek["ts"] > b[k + 1]["ts"]:
		bad = 1; say("FAIL: item %d ends after the next begins" % k)
	if k < 19 and b[k + 1]["item"] - bk["item"] != 8:
		bad = 1; say("FAIL: items %d and %d are not 8 bytes apart" % (k, k + 1))
if not bad:
	say("ok: 20 items, each begun at the entry and ended at the return, in order")
sys.exit(bad)
' || fail "the begin/end records of the hooked calls are wrong (see above)"

expect_clean_error '--remove takes no --as or --at-return' "$ARGUS" instrument --pid "$LPID" --func live_item --remove --at-return end
"$ARGUS" instrument --pid "$LPID" --func live_item --remove >"$T/r.out" 2>"$T/r.err" ||
	fail "--remove failed" "$T/r.err"
[ "$(live_mem "$ADDR" 8)" = "$ORIG" ] || fail "after --remove live_item is $(live_mem "$ADDR" 8), the file has $ORIG"
live_send "work 5"
live_wait_line '^DONE n=5 sum=35$'
live_send quit
live_wait_line '^EXIT ok'
live_finish 0

# -- a real program: libz's deflate in python3
SRC=$(cd "$(dirname "$0")/../apps" && pwd)
live_start crc /usr/bin/python3 "$SRC/live_crc.py"
live_wait_line '^READY=1'
"$ARGUS" instrument --pid "$LPID" --func libz.so.1:deflate --as begin --at-return end \
	>"$T/z.out" 2>"$T/z.err" || fail "instrument libz.so.1:deflate --at-return end failed" "$T/z.err"
log "$(tail -n 1 "$T/z.out")"
live_send "zip 20"
live_wait_line '^ZIP n=20 '
grep -q '^ZIP n=20 bad=0$' "$T/crc.out" || fail "zlib.compress/decompress went wrong through the return stub" "$T/crc.out"
"$ARGUS" instrument --pid "$LPID" --list >"$T/zlist" 2>&1 || fail "--list failed" "$T/zlist"
grep -q 'deflate as begin at-return end (0 in flight) hits 20 ' "$T/zlist" ||
	fail "--list does not show 20 deflate calls, 0 in flight" "$T/zlist"
sleep 0.3
"$ARGUS" save -o "$T/z.argus" >"$T/zsave.out" 2>&1 || fail "argus save failed" "$T/zsave.out"
dump_to "$T/z.argus" "$T/z.dump" --pid "$LPID"
check_dump "$T/z.dump" '
wk = [e for e in ev if e["type"] in ("work_begin", "work_end")]
n = sum(1 for e in wk if e["type"] == "work_begin")
say("python3: %d work records, %d of them work_begin" % (len(wk), n))
if n != 20 or len(wk) != 40:
	say("FAIL: expected 20 begin and 20 end"); show(wk); sys.exit(1)
for k in range(0, 40, 2):
	b, x = wk[k], wk[k + 1]
	if b["type"] != "work_begin" or x["type"] != "work_end" or b["item"] != x["item"] or not b["item"]:
		say("FAIL: records %d and %d are not a begin and the end of the same item" % (k, k + 1)); show([b, x]); sys.exit(1)
say("ok: 20 deflate calls, each a begin and an end of the same z_stream")
' || fail "the records of the hooked deflate calls are wrong (see above)"
"$ARGUS" instrument --pid "$LPID" --func libz.so.1:deflate --remove >"$T/zr.out" 2>"$T/zr.err" ||
	fail "--remove of deflate failed" "$T/zr.err"
live_send "zip 5"
live_wait_line '^ZIP n=5 bad=0$'
live_send quit
live_wait_line '^EXIT ok'
live_finish 0
pass "--as begin --at-return end: 20 calls, 20 begin/end pairs with their items, results right, --remove restores the bytes; the same on libz deflate in python3"
