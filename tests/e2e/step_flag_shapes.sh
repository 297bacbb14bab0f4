#!/usr/bin/env bash
# step_flag_shapes.sh - `argus flag` on three more spin shapes (issue 13 §8),
# each checked against the app's own ground truth and nm:
#   spin_sleep   sleep-retry loop (usleep between checks) on a global:
#                the sleep is stepped through; symbol config_ready
#   spin_pause   pure busy spin with `pause` on a field of a malloc'd job:
#                no symbol, mapping [heap] at the offset the app computed
#   spin_socket  yield loop on state.done, set after a message from another
#                process through a unix socket: symbol state + 8
# After each, the thread is untraced and runs on: spin_socket (4 s) ends
# with exit 0 once its writer sends.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/step_lib.sh"
e2e_init "$1"

flag_of() {   # flag_of NAME: argus flag on $APP_PID into $T/NAME.json
	timeout -k 5 30 "$ARGUS" flag --pid "$APP_PID" --json >"$T/$1.json" 2>"$T/$1.err" ||
		fail "argus flag on $1 failed" "$T/$1.err"
	log "$1: $(cat "$T/$1.json")"
	not_traced "$APP_PID"
	kill -0 "$APP_PID" 2>/dev/null || fail "$1 died after argus flag"
	[ "$(jget "$T/$1.json" 'j["flag"]["addr"]')" = "$(printf '%d' "$(kv FLAG_ADDR "$APP_OUT")")" ] ||
		fail "$1: flag addr is not FLAG_ADDR=$(kv FLAG_ADDR "$APP_OUT")" "$T/$1.json"
	[ "$(jget "$T/$1.json" 'j["flag"]["size"]')" = "$(kv FLAG_SIZE "$APP_OUT")" ] ||
		fail "$1: flag size" "$T/$1.json"
	case $(jget "$T/$1.json" 'j["flag"]["insn"]["where"]') in
	"$(kv SPIN_FUNCTION "$APP_OUT")"+*) ;;
	*) fail "$1: the read is not in $(kv SPIN_FUNCTION "$APP_OUT")" "$T/$1.json" ;;
	esac
}

# sleep-retry
start_app spin_sleep 20
flag_of spin_sleep
bias=$(( $(printf '%d' "$(kv SPIN_FUNCTION_ADDR "$APP_OUT")") - $(nm_addr "$APPS/spin_sleep" wait_config) ))
[ "$(jget "$T/spin_sleep.json" 'j["flag"]["addr"]')" = $(( bias + $(nm_addr "$APPS/spin_sleep" config_ready) )) ] ||
	fail "spin_sleep: flag addr is not nm's config_ready + bias" "$T/spin_sleep.json"
[ "$(jget "$T/spin_sleep.json" 'j["flag"]["symbol"]')" = config_ready ] ||
	fail "spin_sleep: symbol is not config_ready" "$T/spin_sleep.json"
[ "$(jget "$T/spin_sleep.json" 'j["loop"]["iterations"] >= 2')" = True ] ||
	fail "spin_sleep: fewer than 2 loop iterations seen (the sleep was not stepped through)" "$T/spin_sleep.json"
stop_app

# busy spin on the heap
start_app spin_pause 20
flag_of spin_pause
[ "$(jget "$T/spin_pause.json" 'j["flag"]["symbol"]')" = null ] ||
	fail "spin_pause: a heap flag got a symbol" "$T/spin_pause.json"
[ "$(jget "$T/spin_pause.json" 'j["flag"]["mapping"]')" = "[heap]" ] ||
	fail "spin_pause: mapping is not [heap]" "$T/spin_pause.json"
[ "$(jget "$T/spin_pause.json" 'j["flag"]["offset"]')" = "$(printf '%d' "$(kv FLAG_HEAP_OFFSET "$APP_OUT")")" ] ||
	fail "spin_pause: offset in [heap] is not FLAG_HEAP_OFFSET" "$T/spin_pause.json"
grep -q '"text":"pause"' "$T/spin_pause.json" && fail "spin_pause: the flag read is the pause" "$T/spin_pause.json"
stop_app

# the writer is another process, through a socket
start_app spin_socket 4
flag_of spin_socket
[ "$(jget "$T/spin_socket.json" 'j["flag"]["symbol"]')" = state ] ||
	fail "spin_socket: symbol is not state" "$T/spin_socket.json"
[ "$(jget "$T/spin_socket.json" 'j["flag"]["symbol_offset"]')" = "$(kv FLAG_SYMBOL_OFFSET "$APP_OUT")" ] ||
	fail "spin_socket: offset in state is not $(kv FLAG_SYMBOL_OFFSET "$APP_OUT")" "$T/spin_socket.json"
wait "$APP_PID" || fail "spin_socket did not end normally after the detach" "$APP_OUT.err"

pass "flags found: sleep-retry config_ready, busy-spin in [heap], socket-fed state+8; threads left running untraced"
