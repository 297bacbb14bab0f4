#!/usr/bin/env bash
# step_flag_case.sh - `argus flag` during case_flag_spin's hang (the
# paper's System Preferences spin, BRIEF §7 case 3) names display_done:
# the address and symbol that nm gives, moved by the load bias that the
# app's own printed SPIN_FUNCTION_ADDR gives, and the address the app
# printed (FLAG_ADDR).  The read is in wait_for_display_flag, the app is
# left running and ends normally.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/step_lib.sh"
e2e_init "$1"

BIN=$APPS/case_flag_spin
OUT=$T/cfs.out
"$BIN" >"$OUT" 2>"$T/cfs.err" &
P=$!
E2E_PIDS+=("$P")
# The hang click is input 7 of 9, 150 ms apart: the spin runs from about
# 1.05 s to 3.55 s after start.
# the hang click is input 7 of 9, 150 ms apart: 1.05..3.55 s; inputs 8
# and 9, whose flag writes the watch must see, come at 3.85 and 4.0 s, so
# argus flag starts as soon as the spin does, not after a fixed sleep
wait_spinning "$P"
timeout -k 5 30 "$ARGUS" flag --pid "$P" --json >"$T/flag.json" 2>"$T/flag.err" ||
	fail "argus flag --pid $P failed" "$T/flag.err"
log "flag: $(cat "$T/flag.json")"
wait "$P" || fail "case_flag_spin exited non-zero after argus flag detached" "$T/cfs.err"

want=$(printf '%d' "$(kv FLAG_ADDR)")
bias=$(( $(printf '%d' "$(kv SPIN_FUNCTION_ADDR)") - $(nm_addr "$BIN" wait_for_display_flag) ))
from_nm=$(( bias + $(nm_addr "$BIN" display_done) ))
[ "$want" = "$from_nm" ] || fail "ground truth disagrees: FLAG_ADDR $want, nm+bias $from_nm"

got=$(jget "$T/flag.json" 'j["flag"]["addr"]')
[ "$got" = "$want" ] || fail "flag addr $got, nm says $want (display_done)" "$T/flag.json"
[ "$(jget "$T/flag.json" 'j["flag"]["symbol"]')" = display_done ] ||
	fail "flag symbol is not display_done" "$T/flag.json"
[ "$(jget "$T/flag.json" 'j["flag"]["size"]')" = "$(kv FLAG_SIZE)" ] ||
	fail "flag size is not $(kv FLAG_SIZE)" "$T/flag.json"
[ "$(jget "$T/flag.json" 'j["flag"]["value"]')" = 0 ] ||
	fail "the spinning thread saw the flag set" "$T/flag.json"
case $(jget "$T/flag.json" 'j["flag"]["insn"]["where"]') in
wait_for_display_flag+*) ;;
*) fail "the read is not in wait_for_display_flag" "$T/flag.json" ;;
esac
pass "argus flag named display_done at $(printf '0x%x' "$got") (nm + bias), read in wait_for_display_flag; the app ended normally"
