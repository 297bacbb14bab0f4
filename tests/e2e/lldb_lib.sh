# lldb_lib.sh - what the lldb plugin's end-to-end tests share (sourced by
# lldb_busy.sh and lldb_circular.sh after lib.sh and e2e_init).
#
# The tests drive the real lldb-16 in batch mode (`lldb-16 -b`) against a
# real app: attach, `plugin load build/lib/libargus-lldb.so`, then `argus`
# commands.  lldb prints the commands it runs ("(lldb) argus diagnose") and
# their output; errors come as "error: ..." and make `lldb -b` stop and
# exit non-zero.

PLUGIN=$BUILD/lib/libargus-lldb.so
LLDB_BIN=${LLDB_BIN:-lldb-16}
# lldb-16 finds its lldb-server itself, but say it once for every host
export LLDB_DEBUGSERVER_PATH=${LLDB_DEBUGSERVER_PATH:-/usr/lib/llvm-16/bin/lldb-server}

# lldb_require: lldb-16, its lldb-server and the plugin are there.
lldb_require() {
	command -v "$LLDB_BIN" >/dev/null || fail "no $LLDB_BIN (scripts/install-deps.sh installs lldb-16)"
	[ -x "$LLDB_DEBUGSERVER_PATH" ] || fail "no lldb-server at $LLDB_DEBUGSERVER_PATH"
	[ -f "$PLUGIN" ] || fail "no plugin $PLUGIN (build first)"
}

# lldb_run NAME LLDB-ARGS...: `lldb-16 -b LLDB-ARGS` with a timeout; its
# output (stdout and stderr) in $T/NAME.lldb, its exit status in LLDB_RC.
lldb_run() {
	local name=$1
	shift
	timeout -k 5 60 "$LLDB_BIN" -b "$@" >"$T/$name.lldb" 2>&1 </dev/null
	LLDB_RC=$?
	LLDB_OUT=$T/$name.lldb
	log "lldb $name: exit $LLDB_RC"
}

# lldb_no_crash: the last lldb run ended by itself (no signal, no timeout,
# no LLVM crash report).
lldb_no_crash() {
	[ "$LLDB_RC" -lt 124 ] || fail "lldb exited $LLDB_RC (crash, signal or timeout)" "$LLDB_OUT" 80
	grep -qiE 'PLEASE submit a bug report|Segmentation fault|Stack dump:' "$LLDB_OUT" &&
		fail "lldb crashed" "$LLDB_OUT" 80
	return 0
}

# expect_in FILE REGEX WHAT: FILE has a line matching REGEX (grep -E).
expect_in() {
	grep -qE -- "$2" "$1" || fail "$3 (no line matching /$2/)" "$1" 80
}

# start_app NAME [ARGS...]: $APPS/case_NAME ARGS in the background;
# APP_PID, APP_OUT (its stdout: the ground truth, complete once it has
# exited).
start_app() {
	APP_OUT=$T/$1.out
	APP_ERR=$T/$1.err
	"$APPS/case_$1" "${@:2}" >"$APP_OUT" 2>"$APP_ERR" &
	APP_PID=$!
	E2E_PIDS+=("$APP_PID")
	log "started case_$1, pid $APP_PID"
}

# wait_in_hang STATE [MS]: waits until the app's main thread has been in
# STATE for MS (default 300) ms of wall-clock time, sampling
# /proc/PID/syscall: "running" for a busy hang, a syscall number (202:
# futex) for a blocked one.  Normal inputs take microseconds, so 300 ms in
# one state is the hang.  Time, not a count of samples, decides: on a
# loaded machine one sample can take far longer than its 50 ms sleep.
# Fails after 10 s.
wait_in_hang() {
	local want=$1 ms=${2:-300} s since="" now end=$((SECONDS + 10))
	while :; do
		[ $SECONDS -lt $end ] || fail "case app $APP_PID never stayed in '$want' for $ms ms" "$APP_ERR"
		kill -0 "$APP_PID" 2>/dev/null || fail "the app exited before its hang" "$APP_ERR"
		s=$(cut -d' ' -f1 "/proc/$APP_PID/syscall" 2>/dev/null)
		now=$(date +%s%3N)
		if [ "$s" = "$want" ]; then
			[ -n "$since" ] || since=$now
			[ $((now - since)) -lt "$ms" ] || break
		else
			since=""
		fi
		sleep 0.05
	done
	log "the app's main thread has been in '$want' for $ms ms: inside its hang"
}

# wait_app: the app exits 0 within 20 s (lldb detached and let it go on).
wait_app() {
	local rc end=$((SECONDS + 20))
	while kill -0 "$APP_PID" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$APP_PID/stat" 2>/dev/null)" != Z ]; do
		[ $SECONDS -lt $end ] || fail "the app $APP_PID still runs 20 s after lldb (left stopped?): state $(cut -d' ' -f3 "/proc/$APP_PID/stat")"
		sleep 0.1
	done
	wait "$APP_PID"
	rc=$?
	[ $rc -eq 0 ] || fail "the app exited $rc after lldb detached" "$APP_ERR"
}
