#!/bin/bash
# e2e: busy work in a named function is seen by the CPU sampler with a
# symbolized stack (tests/apps/busy.c: main -> busy_outer -> busy_middle ->
# busy_leaf, ~2 s), built without frame pointers (busy_nofp: the callers
# come from DWARF unwinding) and with them (busy_fp).
# Asserts, for each: busy_nofp's busy_leaf really does not push %rbp;
# `argus dump --stacks` has `sample` events of the app's tid, and some of
# them have busy_leaf with busy_middle and busy_outer below it, in order.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

# the premise: busy_nofp's leaf keeps no frame pointer, busy_fp's does
leaf_asm() { objdump -d --no-show-raw-insn "$1" | awk '/<busy_leaf>:$/{p=1;next} p&&/^$/{exit} p'; }
leaf_asm "$APPS/busy_nofp" >"$T/nofp.asm"
[ -s "$T/nofp.asm" ] || fail "no busy_leaf in $APPS/busy_nofp (objdump)"
if grep -qE 'push +%rbp|mov +%rsp,%rbp' "$T/nofp.asm"; then
	fail "busy_nofp's busy_leaf sets up a frame pointer; the app was not built with -fomit-frame-pointer" "$T/nofp.asm"
fi
leaf_asm "$APPS/busy_fp" >"$T/fp.asm"
grep -qE 'push +%rbp' "$T/fp.asm" || fail "busy_fp's busy_leaf does not push %rbp" "$T/fp.asm"
log "objdump: busy_nofp's busy_leaf keeps no frame pointer, busy_fp's does"

for app in busy_nofp busy_fp; do
	record "$app" -- "$APPS/$app" 2
	dump_to "$TRACE" "$T/$app.dump" --stacks
	export TID=$(kv TID) APP=$app
	check_dump "$T/$app.dump" '
TID, APP = int(ENV["TID"]), ENV["APP"]
s = [e for e in ev if e["type"] == "sample" and e["tid"] == TID]
if not s:
	say("FAIL: no sample events of %s tid %d" % (APP, TID)); show(e for e in ev if e["tid"] == TID); sys.exit(1)
leaf = [e for e in s if frame_at(e, "busy_leaf") >= 0]
def unwound(e):
	l, m, o = frame_at(e, "busy_leaf"), frame_at(e, "busy_middle"), frame_at(e, "busy_outer")
	return l >= 0 and m > l and o > m
full = [e for e in s if unwound(e)]
say("%s: %d samples of tid %d, %d with busy_leaf, %d with busy_leaf <- busy_middle <- busy_outer" % (APP, len(s), TID, len(leaf), len(full)))
if not leaf:
	say("FAIL: no sample of %s has busy_leaf in its stack; samples:" % APP); show(s); sys.exit(1)
if not full:
	say("FAIL: no sample of %s unwinds busy_leaf to busy_middle and busy_outer; samples with busy_leaf:" % APP); show(leaf); sys.exit(1)
say("ok, e.g.:"); show(full[:1])
# most samples taken inside busy_leaf should unwind fully
if len(full) * 2 < len(leaf):
	say("FAIL: only %d of %d busy_leaf samples unwind to busy_outer" % (len(full), len(leaf))); show(e for e in leaf if not unwound(e)); sys.exit(1)
' || fail "$app: busy_leaf stacks not seen or not unwound (see above)"
done
pass "sampler: busy_leaf <- busy_middle <- busy_outer symbolized, with and without frame pointers"
