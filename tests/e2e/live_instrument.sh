#!/bin/bash
# e2e: `argus instrument` into a process that is already hung (issue 14
# §3, docs/interposer.md "Live: inject and instrument").
# tests/apps/live_hung: main in poll(), a worker in FUTEX_WAIT, a parker in
# pause() 4 bytes into live_parked.  live_item(item) is the function the
# worker calls once per item; it is patched while every thread is hung.
# Asserts:
#   - the patch is applied (entry = jmp rel32), the threads are hung as
#     before, and after "work 20" the output is still right and the
#     trampoline's hit counter (`--list`) is exactly 20;
#   - with an interposer that exports argus_work_begin (the `work` slice),
#     the patch calls it: argusd takes >= 20 more interposer records;
#     without it the instrument injects the library and says, clearly,
#     that the hook is missing, and the test patches --count-only;
#   - --remove: the entry's bytes equal the executable file's again, the
#     trampoline is unmapped, the counter no longer moves;
#   - --schema FILE applies and removes the `instrument` lines;
#   - in a second process, with a stand-in interposer whose argus_work_*
#     print each call (tests/apps/live_fake_hooks.c): instrument injects
#     it, and the hook runs once per item with live_item's argument;
#   - refusals, one line each: a 3-byte function, a jump back into the
#     patched bytes, a thread parked inside them, a second patch of the
#     same function, an unknown symbol, a bad --as, a dead pid.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/live_lib.sh"
LIB=$BUILD/lib/libargus-interpose.so
APP=$APPS/live_hung
mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 64M --no-watch-interactive

live_start hung "$APP" park
live_wait_line '^READY=1'
live_wait_blocked 3
before=$(live_syscalls)
log "hung: pid $LPID: $before"

VADDR=0x$(nm "$APP" | awk '$3 == "live_item" { print $1 }')
ORIG=$(live_file_bytes "$APP" "$VADDR" 8)

if nm -D --defined-only "$LIB" | has ' argus_work_begin$'; then
	HOOK=1
	"$ARGUS" instrument --pid "$LPID" --func live_item --as begin >"$T/i.out" 2>"$T/i.err" ||
		fail "argus instrument --func live_item --as begin failed" "$T/i.err"
else
	HOOK=0
	# the interposer of this build has no argus_work_*: instrument
	# injects it, then refuses with a clear reason
	expect_clean_error 'has no argus_work_begin.*--count-only' "$ARGUS" instrument --pid "$LPID" --func live_item --as begin
	grep -q libargus-interpose /proc/"$LPID"/maps || fail "instrument did not inject the interposer first"
	log "this build's interposer has no argus_work_* (the work slice): patching --count-only"
	"$ARGUS" instrument --pid "$LPID" --func live_item --as begin --count-only >"$T/i.out" 2>"$T/i.err" ||
		fail "argus instrument --count-only failed" "$T/i.err"
fi
log "$(cat "$T/i.out")"
ADDR=$(sed -n 's/.* at \(0x[0-9a-f]*\) .*/\1/p' "$T/i.out")
[ -n "$ADDR" ] || fail "instrument printed no address" "$T/i.out"
now=$(live_mem "$ADDR" 8)
[ "${now:0:2}" = e9 ] || fail "the entry of live_item is $now, not a jmp (e9)"
live_same_blocked "$before"
"$ARGUS" status --raw >"$T/st0" 2>&1
rec0=$(sed -n 's/^interpose_records=//p' "$T/st0")

live_send "work 20"
live_wait_line '^DONE n=20 '
[ "$(sed -n 's/^DONE n=20 sum=//p' "$T/hung.out")" = 2490 ] || fail "wrong result while patched" "$T/hung.out"
"$ARGUS" instrument --pid "$LPID" --list >"$T/list" 2>&1 || fail "--list failed" "$T/list"
log "list: $(cat "$T/list")"
hits=$(sed -n 's/.*live_hung:live_item as .* hits \([0-9]*\) .*/\1/p' "$T/list")
[ "$hits" = 20 ] || fail "the trampoline counted $hits hits, expected 20" "$T/list"
if [ $HOOK = 1 ]; then
	sleep 0.3
	"$ARGUS" status --raw >"$T/st1" 2>&1
	rec1=$(sed -n 's/^interpose_records=//p' "$T/st1")
	[ $((rec1 - rec0)) -ge 20 ] || fail "argusd took $((rec1 - rec0)) interposer records from 20 hooked calls" "$T/st1"
	log "argusd took $((rec1 - rec0)) records from the 20 hooked calls"
fi

# -- refusals
expect_clean_error 'too short to patch' "$ARGUS" instrument --pid "$LPID" --func live_short --as begin --count-only
expect_clean_error 'jump at \+0x6 .* lands at \+0x2, inside' "$ARGUS" instrument --pid "$LPID" --func live_jumpback --as end --count-only
PARKER=$(kv PARKER_TID "$T/hung.out")
expect_clean_error "thread $PARKER is executing the bytes to patch .*entry\\+4" "$ARGUS" instrument --pid "$LPID" --func live_parked --as begin --count-only
expect_clean_error 'already instrumented' "$ARGUS" instrument --pid "$LPID" --func live_item --as end --count-only
expect_clean_error 'no function "no_such_fn"' "$ARGUS" instrument --pid "$LPID" --func no_such_fn --as end --count-only
expect_clean_error '--as needs' "$ARGUS" instrument --pid "$LPID" --func live_item --as started
for f in live_short live_jumpback live_parked; do
	a=0x$(nm "$APP" | awk -v f=$f '$3 == f { print $1 }')
	[ "$(live_mem $(printf '%#x' $((ADDR - VADDR + a))) 2)" = "$(live_file_bytes "$APP" "$a" 2)" ] ||
		fail "a refused patch changed $f"
done

# -- remove: the file's bytes again, the trampoline gone
PAGE=$(awk '{ print $NF }' "$T/list")
"$ARGUS" instrument --pid "$LPID" --func live_item --remove >"$T/r.out" 2>"$T/r.err" ||
	fail "--remove failed" "$T/r.err"
log "$(cat "$T/r.out")"
[ "$(live_mem "$ADDR" 8)" = "$ORIG" ] || fail "after --remove live_item is $(live_mem "$ADDR" 8), the file has $ORIG"
grep -q "^${PAGE#0x}-" /proc/"$LPID"/maps && fail "the trampoline page $PAGE is still mapped"
expect_clean_error 'not instrumented' "$ARGUS" instrument --pid "$LPID" --func live_item --remove
live_send "work 5"
live_wait_line '^DONE n=5 sum=35$'

# -- the schema names the functions
cat >"$T/app.schema" <<'S'
# a graph rule and a live one in the same file
boundary before syscall:poll
instrument live_item as dequeue
S
"$ARGUS" instrument --pid "$LPID" --schema "$T/app.schema" --count-only >"$T/s.out" 2>"$T/s.err" ||
	fail "--schema failed" "$T/s.err"
"$ARGUS" instrument --pid "$LPID" --list >"$T/list2" 2>&1
grep -q 'live_hung:live_item as count hits 0' "$T/list2" || fail "--schema did not patch live_item" "$T/list2"
"$ARGUS" instrument --pid "$LPID" --schema "$T/app.schema" --remove >"$T/s2.out" 2>"$T/s2.err" ||
	fail "--schema --remove failed" "$T/s2.err"
[ "$(live_mem "$ADDR" 8)" = "$ORIG" ] || fail "--schema --remove left live_item changed"
printf 'instrument live_item as started\n' >"$T/bad.schema"
expect_clean_error 'bad.schema:1: expected' "$ARGUS" instrument --pid "$LPID" --schema "$T/bad.schema"

live_send quit
live_wait_line '^EXIT ok'
live_finish 0
DEADPID=$LPID

# -- the hook, in a real process, whatever this build's interposer has:
# a stand-in libargus-interpose.so (tests/apps/live_fake_hooks.c) prints
# each argus_work_* call; instrument injects it and patches --as end
FAKE=$APPS/fakehook/libargus-interpose.so
[ -f "$FAKE" ] || fail "no $FAKE (build first)"
live_start hooked "$APP"
live_wait_line '^READY=1'
live_wait_blocked 2
before=$(live_syscalls)
"$ARGUS" instrument --pid "$LPID" --func live_item --as end --lib "$FAKE" >"$T/h.out" 2>"$T/h.err" ||
	fail "instrument --as end with the stand-in interposer failed" "$T/h.err"
grep -q 'injecting it' "$T/h.out" || fail "instrument did not inject the interposer first" "$T/h.out"
grep -q 'calls argus_work_end(rdi)' "$T/h.out" || fail "the patch does not call argus_work_end" "$T/h.out"
live_same_blocked "$before"
live_send "work 4"
live_wait_line '^DONE n=4 sum=18$'
grep -c '^HOOK end item=' "$T/hooked.err" >"$T/nhook"
[ "$(cat "$T/nhook")" = 4 ] || fail "argus_work_end ran $(cat "$T/nhook") times for 4 items" "$T/hooked.err"
# the items are one calloc'd array of longs: 4 addresses 8 bytes apart
/usr/bin/python3 - "$T/hooked.err" <<'PY' || fail "the hook did not get live_item's argument (the item pointers)" "$T/hooked.err"
import sys
a = [int(l.split("item=")[1], 16) for l in open(sys.argv[1]) if l.startswith("HOOK end")]
sys.exit(0 if len(a) == 4 and all(a[i + 1] - a[i] == 8 for i in range(3)) and a[0] else 1)
PY
log "the hook ran 4 times with the 4 items: $(sed -n 's/^HOOK end item=//p' "$T/hooked.err" | tr '\n' ' ')"
live_send quit
live_wait_line '^EXIT ok'
live_finish 0
LPID=$DEADPID
expect_clean_error "no process $LPID" "$ARGUS" instrument --pid "$LPID" --func live_item --as begin
pass "instrument into a hung process: 20 hits, output right, refusals clear, --remove restores the file's bytes (hook: $HOOK)"
