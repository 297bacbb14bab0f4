#!/usr/bin/env bash
# step_diff.sh - `argus step --record` on two runs of branch_pick (a, b),
# then `argus step-diff`: the first divergence is the conditional branch
# of choose_path (inside its nm extent, a jcc as objdump disassembles it at
# that offset), its input on each side is the global `mode` (the address
# each run printed) with values 1 and 0; `argus flag --normal a` on the b
# run names mode through the diff.  Also --until: stepping the b run until
# rip is choose_path's entry stops there, and `left choose_path` after its
# ret.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/step_lib.sh"
e2e_init "$1"

BIN=$APPS/branch_pick
start_app branch_pick a 20
PA=$APP_PID OA=$APP_OUT
start_app branch_pick b 20
PB=$APP_PID OB=$APP_OUT

for s in a b; do
	p=PA; [ $s = b ] && p=PB
	timeout -k 5 30 "$ARGUS" step --pid "${!p}" --count 400 --record "$T/$s.stp" >"$T/$s.step" 2>&1 ||
		fail "argus step --record $s failed" "$T/$s.step"
	log "$(cat "$T/$s.step")"
	not_traced "${!p}"
done
timeout -k 5 30 "$ARGUS" step-diff "$T/a.stp" "$T/b.stp" --json >"$T/diff.json" 2>"$T/diff.err" ||
	fail "argus step-diff failed" "$T/diff.err"
"$ARGUS" step-diff "$T/a.stp" "$T/b.stp" >"$T/diff.txt" 2>&1
log "diff: $(cat "$T/diff.txt")"

[ "$(jget "$T/diff.json" 'j["diverged"]')" = True ] || fail "no divergence found" "$T/diff.json"
[ "$(jget "$T/diff.json" 'j["divergence"]["b"]["insn"]["symbol"]')" = choose_path ] ||
	fail "the divergence is not in choose_path" "$T/diff.json"
off=$(jget "$T/diff.json" 'j["divergence"]["b"]["insn"]["symbol_offset"]')
size=$(nm -S "$BIN" | awk '$4 == "choose_path" { print $2 }')
[ -n "$size" ] || fail "nm -S gives no size for choose_path"
[ "$off" -lt $((16#$size)) ] || fail "divergence offset $off is outside choose_path (size 0x$size)"
# the runtime address agrees with the app's own &choose_path
baddr=$(jget "$T/diff.json" 'j["divergence"]["b"]["insn"]["addr"]')
[ "$baddr" = $(( $(printf '%d' "$(kv BRANCH_FUNCTION_ADDR "$OB")") + off )) ] ||
	fail "divergence address $baddr is not choose_path+$off of the b run" "$T/diff.json"
# objdump at choose_path+off: a conditional jump
at=$(printf '%x' $(( $(nm_addr "$BIN" choose_path) + off )))
mn=$(objdump -d --no-show-raw-insn "$BIN" | awk -v a="$at:" '$1 == a { print $2; exit }')
case $mn in
j*) [ "$mn" != jmp ] || fail "objdump: choose_path+$off is an unconditional jmp" ;;
*) fail "objdump: choose_path+$off is '$mn', not a conditional jump" ;;
esac
# the condition's input: mode, 1 in a and 0 in b
for s in a b; do
	o=OA; [ $s = b ] && o=OB
	m=$(printf '%d' "$(kv MODE_ADDR "${!o}")")
	[ "$(jget "$T/diff.json" "[i['addr'] for i in j['divergence']['$s']['inputs'] if i['kind'] == 'mem'][0]")" = "$m" ] ||
		fail "side $s: the memory input is not mode ($m)" "$T/diff.json"
	[ "$(jget "$T/diff.json" "[i['value'] for i in j['divergence']['$s']['inputs'] if i['kind'] == 'mem'][0]")" = "$(kv MODE "${!o}")" ] ||
		fail "side $s: mode's value is not $(kv MODE "${!o}")" "$T/diff.json"
done
[ "$(jget "$T/diff.json" 'j["loop"] is not None and j["loop"]["iterations"] >= 2')" = True ] ||
	fail "no loop around the divergence" "$T/diff.json"

# argus flag --normal: the hang side's divergent branch reads `mode`, which
# the thread never writes: that is the flag, found by the diff
timeout -k 5 30 "$ARGUS" flag --pid "$PB" --normal "$T/a.stp" --json >"$T/flag.json" 2>"$T/flag.err" ||
	fail "argus flag --normal failed" "$T/flag.err"
log "flag --normal: $(cat "$T/flag.json")"
[ "$(jget "$T/flag.json" 'j["method"]')" = diff ] || fail "argus flag --normal did not use the diff" "$T/flag.json"
[ "$(jget "$T/flag.json" 'j["flag"]["addr"]')" = "$(printf '%d' "$(kv MODE_ADDR "$OB")")" ] ||
	fail "argus flag --normal: the flag is not mode" "$T/flag.json"
[ "$(jget "$T/flag.json" 'j["flag"]["symbol"]')" = mode ] || fail "argus flag --normal: symbol is not mode" "$T/flag.json"

# --until rip == choose_path's entry
fa=$(printf '0x%x' "$(kv BRANCH_FUNCTION_ADDR "$OB")")
timeout -k 5 30 "$ARGUS" step --pid "$PB" --until "rip == $fa" --count 1000 --json >"$T/until.json" 2>"$T/until.err" ||
	fail "argus step --until 'rip == $fa' failed" "$T/until.err"
[ "$(jget "$T/until.json" 'j["stopped"]')" = until ] || fail "--until did not stop on the condition" "$T/until.json"
last_next=$(jget "$T/until.json" 'j["insns"][-1]["text"]')
case $last_next in call*|jmp*) ;; *) fail "the step before choose_path's entry is '$last_next', not a call" "$T/until.json" ;; esac
# left choose_path: from inside it, until it returns
timeout -k 5 30 "$ARGUS" step --pid "$PB" --until "left choose_path" --count 1000 --json >"$T/left.json" 2>"$T/left.err" ||
	fail "argus step --until 'left choose_path' failed" "$T/left.err"
[ "$(jget "$T/left.json" 'j["insns"][-1]["text"]')" = ret ] ||
	fail "'left choose_path' did not stop after its ret" "$T/left.json"
not_traced "$PB"
pass "step-diff: first divergence choose_path+$off ($mn), input mode 1 vs 0 at each run's &mode; --until rip and left FUNC stop where they should"
