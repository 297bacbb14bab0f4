# step_lib.sh - helpers of the step engine tests (step_*.sh), sourced after
# lib.sh and e2e_init.  No collector: these tests ptrace real processes.
#
#   start_app NAME ARGS...   run $APPS/NAME in the background (registered
#                            for cleanup), wait for its READY=1 line;
#                            sets APP_PID and APP_OUT (its ground truth)
#   jget FILE EXPR           a value of the JSON in FILE: EXPR is Python on
#                            `j` (j["flag"]["addr"]); None prints "null"
#   nm_addr BIN SYMBOL       the symbol's value from nm, in decimal
#   not_traced PID           the process has no tracer now (TracerPid 0)
#   wait_spinning PID [TID]  wait (at most 8 s) until the thread has been
#                            runnable for 100 ms on end: a spin began (an
#                            app idle in its loop sleeps between inputs)

PY=/usr/bin/python3

start_app() {
	local name=$1
	shift
	APP_OUT=$T/$name.$RANDOM.out
	"$APPS/$name" "$@" >"$APP_OUT" 2>"$APP_OUT.err" &
	APP_PID=$!
	E2E_PIDS+=("$APP_PID")
	for _ in $(seq 100); do
		grep -q '^READY=1' "$APP_OUT" && return 0
		kill -0 "$APP_PID" 2>/dev/null || fail "$name exited before READY" "$APP_OUT.err"
		sleep 0.05
	done
	fail "$name printed no READY=1 in 5 s" "$APP_OUT"
}

jget() {
	"$PY" -c 'import json,sys
j=json.load(open(sys.argv[1]))
v=eval(sys.argv[2])
print("null" if v is None else v)' "$1" "$2" || fail "cannot read $2 from $1" "$1"
}

nm_addr() {
	local v
	v=$(nm "$1" | awk -v s="$2" '$3 == s { print $1; exit }')
	[ -n "$v" ] || fail "nm $1 has no symbol $2"
	printf '%d\n' "0x$v"
}

not_traced() {
	local tp
	tp=$(awk '/^TracerPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ "$tp" = 0 ] || fail "process $1 is still traced (TracerPid $tp) after argus detached"
}

wait_spinning() {
	local stat=/proc/$1/task/${2:-$1}/stat run=0 st
	for _ in $(seq 400); do
		# field 3 (after the comm in parentheses): R running or runnable
		st=$(sed 's/.*) //' "$stat" 2>/dev/null | cut -d' ' -f1)
		[ -n "$st" ] || fail "thread ${2:-$1} of process $1 is gone before it spun"
		if [ "$st" = R ]; then
			run=$((run + 1))
			[ $run -ge 5 ] && return 0
		else
			run=0
		fi
		sleep 0.02
	done
	fail "thread ${2:-$1} of process $1 did not spin within 8 s"
}

# stop_app: kill the app started last and reap it.
stop_app() {
	kill -KILL "$APP_PID" 2>/dev/null
	wait "$APP_PID" 2>/dev/null
	return 0
}
