# lib.sh - shared helpers of the end-to-end tests (sourced, not run).
#
# A test script does:
#
#   . "$(dirname "$0")/lib.sh"
#   e2e_init "$1"            # $1 = the build directory; needs root
#   record pp -- "$APPS/pipe_pingpong"    # -> $T/pp.argus, $T/pp.out
#   dump_to "$T/pp.argus" "$T/pp.dump"      # and $T/pp.dump.json (--json)
#   check_dump "$T/pp.dump" 'PYTHON over ev, the events' || fail ...
#   ...assertions; fail "message" [evidence-file]
#   pass "what held"
#
# Every test gets its own temp dir $T and its own ARGUS_RUN_DIR ($T/run),
# so nothing touches the system's /run/argus.  The EXIT trap stops any
# collector the test started (by the pid in its own run dir), kills the
# background processes it registered, unmounts what it mounted and removes
# $T (kept when E2E_KEEP=1 or when the test failed and E2E_KEEP_FAILED=1).
#
# Dump lines (cli/cmd_dump.c, print_event) look like
#   "   pipe_pingpong    1234/1234    [001]   845.005337765: waking         target=..."
# i.e. comm (right-aligned), tid/pid, [cpu], seconds.nanoseconds, type,
# then " ctx=softirq|hardirq|nmi" unless the context is task, then the
# type's fields.  Stack frames under an event start with a tab.  Checks
# read the same events from `argus dump --json` (dumpcheck.py), by field
# name, rather than parsing these lines.

set -u -o pipefail

E2E_NAME=$(basename "$0" .sh)
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# the Python checks import truth.py from this folder
export PYTHONPATH="$E2E_DIR${PYTHONPATH:+:$PYTHONPATH}"
E2E_FAILED=0
E2E_PIDS=()       # background processes to kill on exit
E2E_MOUNTS=()     # mount points to unmount on exit
E2E_RUNDIRS=()    # ARGUS_RUN_DIRs whose collector must be stopped on exit

log() { printf '[%s] %s\n' "$E2E_NAME" "$*"; }

# flip_byte FILE OFFSET: invert every bit of the byte at OFFSET, so the
# file always changes.  Writing a fixed value did not when the byte already
# had it: step_bad_input's header byte 17 is the second byte of the app's
# pid, 0x07 for pid 1990, and its "corrupt" header read back clean.
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	[ -n "$b" ] || fail "flip_byte: no byte $2 in $1"
	printf "\\x$(printf %02x $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# has [GREP-OPTIONS] PATTERN: whether standard input has a matching line,
# as `grep -q` says, but reading all of it.  Under pipefail `ldd X | grep
# -q Y` fails now and then although Y is there: grep -q exits at the first
# match, and a writer that still had lines to write dies of SIGPIPE (141),
# which pipefail makes the pipeline's status (e2e_real_omp_flag failed so,
# its ldd output holding libgomp).
has() { local n; n=$(grep -c "$@"); [ "${n:-0}" -gt 0 ]; }

# fail MESSAGE [EVIDENCE-FILE [MAX-LINES]]: print and exit 1.
fail() {
	E2E_FAILED=1
	printf '[%s] FAIL: %s\n' "$E2E_NAME" "$1" >&2
	if [ $# -ge 2 ] && [ -n "$2" ]; then
		if [ -s "$2" ]; then
			printf '[%s] ---- evidence: %s (first %s lines) ----\n' "$E2E_NAME" "$2" "${3:-40}" >&2
			head -n "${3:-40}" "$2" | sed 's/^/    /' >&2
			printf '[%s] ----\n' "$E2E_NAME" >&2
		else
			printf '[%s] (evidence file %s is empty or missing)\n' "$E2E_NAME" "$2" >&2
		fi
	fi
	exit 1
}

pass() { log "PASS: $*"; exit 0; }

# Skip (ctest SKIP_RETURN_CODE 77) unless root: the tests load BPF.
require_root() {
	if [ "$(id -u)" != 0 ]; then
		log "SKIP: needs root (loads BPF programs system-wide)"
		exit 77
	fi
}

# need_hw_watchpoints: skip (77) on a machine whose hardware breakpoints
# do not fire (a VM without the debug registers passed through: perf
# accepts the breakpoint and counts nothing; seen on this project's VM on
# 2026-11-30).  Asked of tests/apps/bp_fires, independently of argusd's
# own check; where they do not fire, e2e_watch_bad_input checks that
# argus watch says so instead of arming a watch that records nothing.
# An argument says what the test checked before this point (it passed).
need_hw_watchpoints() {
	local out
	out=$("$APPS/bp_fires" 2>&1)
	case $? in
	0) return 0 ;;
	1) log "SKIP${1:+ the rest (passed: $1)}: hardware watchpoints do not fire on this machine (bp_fires: $out); e2e_watch_bad_input checks argus watch's refusal"
	   exit 77 ;;
	*) fail "bp_fires could not open a breakpoint: $out" ;;
	esac
}

# e2e_stop_collectors: stop the collector of every run dir in
# E2E_RUNDIRS (argus stop, then TERM, then KILL by its pid file).  A
# cleanup that removes directories must call it first: a run dir may live
# in one of them, and without its pid file the collector would outlive
# the test.
e2e_stop_collectors() {
	local d pid
	for d in "${E2E_RUNDIRS[@]}"; do
		pid=$(cat "$d/argusd.pid" 2>/dev/null || true)
		if [ -S "$d/argusd.sock" ]; then
			ARGUS_RUN_DIR=$d timeout 20 "$ARGUS" stop >/dev/null 2>&1 || true
		fi
		if [ -n "$pid" ] && is_argusd "$pid"; then
			kill -TERM "$pid" 2>/dev/null || true
			for _ in 1 2 3 4 5 6 7 8 9 10; do is_argusd "$pid" || break; sleep 0.5; done
			is_argusd "$pid" && kill -KILL "$pid" 2>/dev/null
		fi
	done
}

e2e_cleanup() {
	local rc=$?
	local d pid
	e2e_stop_collectors
	for pid in "${E2E_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	for d in "${E2E_MOUNTS[@]}"; do
		umount "$d" 2>/dev/null || umount -l "$d" 2>/dev/null || true
	done
	if [ "${E2E_KEEP:-0}" = 1 ] || { [ $rc -ne 0 ] && [ "${E2E_KEEP_FAILED:-0}" = 1 ]; }; then
		log "kept $T"
	else
		rm -rf "$T"
	fi
	exit $rc
}

# is_argusd PID: the process exists and is an argusd.
is_argusd() {
	[ -n "$1" ] && [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | has argusd
}

# e2e_init BUILD_DIR: sets BUILD, ARGUS, APPS, T, ARGUS_RUN_DIR.
e2e_init() {
	[ $# -ge 1 ] && [ -d "$1" ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
	BUILD=$(cd "$1" && pwd)
	ARGUS=$BUILD/bin/argus
	APPS=$BUILD/tests/apps
	require_root
	[ -x "$ARGUS" ] || { echo "[$E2E_NAME] FAIL: no $ARGUS (build first)" >&2; exit 1; }
	[ -x "$BUILD/bin/argusd" ] || { echo "[$E2E_NAME] FAIL: no $BUILD/bin/argusd (build first)" >&2; exit 1; }
	command -v python3 >/dev/null || { echo "[$E2E_NAME] FAIL: python3 is needed to read dumps (dumpcheck.py)" >&2; exit 1; }
	T=$(mktemp -d "/tmp/argus-e2e-$E2E_NAME.XXXXXX")
	export ARGUS_RUN_DIR=$T/run
	E2E_RUNDIRS+=("$ARGUS_RUN_DIR")
	trap e2e_cleanup EXIT
	trap 'exit 130' INT TERM
	log "build $BUILD, temp $T"
}

# record NAME [RECORD-OPTS...] -- CMD [ARGS...]
# Runs `argus record -o $T/NAME.argus RECORD-OPTS -- CMD`; CMD's stdout goes
# to $T/NAME.out (the app's ground truth), argus's stderr to $T/NAME.err.
# Sets TRACE and OUT.  Fails unless record and CMD succeed.
record() {
	local name=$1 rc
	shift
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	TRACE=$T/$name.argus
	OUT=$T/$name.out
	timeout -k 5 "${RECORD_TIMEOUT:-60}" "$ARGUS" record -o "$TRACE" "${opts[@]}" -- "$@" \
		>"$OUT" 2>"$T/$name.err"
	rc=$?
	[ $rc -eq 0 ] || fail "argus record -o $TRACE -- $* exited $rc (124 = timed out)" "$T/$name.err"
	[ -s "$TRACE" ] || fail "argus record wrote no trace $TRACE" "$T/$name.err"
	log "recorded: $(tail -n 1 "$T/$name.err")"
}

# dump_to TRACE FILE [DUMP-OPTS...]: argus dump into FILE, and with
# --json into FILE.json (what check_dump reads); fails on error.
dump_to() {
	local trace=$1 file=$2 rc
	shift 2
	timeout -k 5 120 "$ARGUS" dump "$trace" "$@" >"$file" 2>"$file.err"
	rc=$?
	[ $rc -eq 0 ] || fail "argus dump $trace $* exited $rc: $(head -c 400 "$file.err")" "$file.err"
	timeout -k 5 120 "$ARGUS" dump "$trace" --json "$@" >"$file.json" 2>"$file.err"
	rc=$?
	[ $rc -eq 0 ] || fail "argus dump $trace --json $* exited $rc: $(head -c 400 "$file.err")" "$file.err"
	log "dump: $(wc -l <"$file") lines; $(grep '^# ' "$file" | tr '\n' ' ')"
}

# flood_cmd: sets FLOOD to a scheduler flood on every CPU, hackbench (rt-tests)
# or perf's copy of it; fails when neither is installed.
flood_cmd() {
	if command -v hackbench >/dev/null; then
		FLOOD=(hackbench -g 4 -l 300)
	elif command -v perf >/dev/null; then
		FLOOD=(perf bench sched messaging -g 4 -l 300)
	else
		fail "neither hackbench (rt-tests) nor perf (linux-perf) is installed"
	fi
}

# mono: CLOCK_MONOTONIC in ns, the clock of the trace (bash has none).
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }

# flock_hang SECONDS LOCKFILE: a real `flock LOCKFILE true` that waits for
# a lock a shell holds SECONDS (the shell is not named flock: its `flock 9`
# exits at once, the lock stays with the open file).  Sets WAITER (the
# waiting flock), HOLDERS (the shell and its sleep), T_BEFORE (mono just
# before the waiter started) and FLOCK_WAIT_MS (how long it waited).
flock_hang() {
	local secs=$1 lock=$2 holder
	sh -c "exec 9>'$lock'; flock 9; echo held; sleep $secs" >"$T/holder.out" &
	holder=$!
	E2E_PIDS+=("$holder")
	for _ in $(seq 1 50); do grep -q held "$T/holder.out" 2>/dev/null && break; sleep 0.1; done
	grep -q held "$T/holder.out" || fail "the lock holder did not take the lock"
	HOLDERS="$holder $(pgrep -P "$holder" | tr '\n' ' ')"
	T_BEFORE=$(mono)
	flock "$lock" true &
	WAITER=$!
	E2E_PIDS+=("$WAITER")
	wait "$WAITER" || fail "flock $lock true failed"
	FLOCK_WAIT_MS=$((($(mono) - T_BEFORE) / 1000000))
	wait "$holder"
}

# kv KEY [FILE]: the value of KEY=VALUE in FILE (default $OUT); fails if absent.
kv() {
	local f=${2:-$OUT} v
	v=$(sed -n "s/^$1=//p" "$f" | head -n 1)
	[ -n "$v" ] || fail "the app printed no $1 (app output below)" "$f"
	printf '%s\n' "$v"
}

# check_dump DUMP-FILE PYTHON-CODE: runs PYTHON-CODE over the events of
# the dump, read from DUMP-FILE.json (dump_to writes both) by dumpcheck.py,
# which documents what the code gets: ev (a list of event dicts, the
# `argus dump --json` fields), ENV, show(LIST), h(N), num(S), frames(E).
# The code exits non-zero (sys.exit(1), after printing the evidence to
# stderr) when the property does not hold.  Ground truth goes in through
# the environment.
check_dump() {
	python3 "$E2E_DIR/dumpcheck.py" "$1" "$2"
}

# start_private_bus: a dbus-daemon of this test's own on $T/bus (session
# type, everyone may own and send), up and listening.  Sets BUS (its
# address) and DAEMON (its pid, killed on exit); $T/bus.addr and
# $T/bus.pid hold what it printed.
start_private_bus() {
	local end
	command -v dbus-daemon >/dev/null || fail "no dbus-daemon (package dbus)"
	BUS=unix:path=$T/bus
	cat >"$T/bus.conf" <<XML
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>$BUS</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
XML
	dbus-daemon --config-file="$T/bus.conf" --nofork --print-address=1 --print-pid=3 \
		>"$T/bus.addr" 3>"$T/bus.pid" 2>"$T/bus.err" &
	DAEMON=$!
	E2E_PIDS+=("$DAEMON")
	end=$((SECONDS + 10))
	until [ -s "$T/bus.pid" ] && [ -S "$T/bus" ]; do
		kill -0 "$DAEMON" 2>/dev/null || fail "dbus-daemon exited" "$T/bus.err"
		[ $SECONDS -lt $end ] || fail "dbus-daemon did not come up in 10 s" "$T/bus.err"
		sleep 0.05
	done
}

# start_collector [ARGUS-START-OPTS...]: argus start in this test's run dir.
start_collector() {
	local rc
	timeout -k 5 90 "$ARGUS" start "$@" >"$T/start.out" 2>"$T/start.err"
	rc=$?
	[ $rc -eq 0 ] || fail "argus start $* exited $rc: $(head -n 3 "$T/start.err")" "$T/start.err"
	log "$(cat "$T/start.out")"
}

# collector_pid: the pid argusd wrote into the run dir.
collector_pid() { cat "$ARGUS_RUN_DIR/argusd.pid" 2>/dev/null; }

# run_for SECONDS CMD [ARGS...]: runs CMD again and again for about SECONDS.
run_for() {
	local secs=$1
	shift
	local end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ]; do
		"$@" >/dev/null 2>&1 || return 1
	done
}

# expect_clean_error EXPECTED-REGEX CMD...: CMD must exit 1..127 (no
# crash, no success) with a first stderr line starting "argus" and matching
# EXPECTED-REGEX (grep -E, case-insensitive).  Sets ERR_LINE and ERR_RC.
expect_clean_error() {
	local re=$1 f=$T/clean_error.$RANDOM
	shift
	timeout -k 5 60 "$@" >"$f.out" 2>"$f.err"
	ERR_RC=$?
	ERR_LINE=$(grep -v '^usage:\|^  ' "$f.err" | head -n 1)
	log "\`$*\` -> exit $ERR_RC: $ERR_LINE"
	[ $ERR_RC -ne 0 ] || fail "\`$*\` succeeded; it should have failed ($re)" "$f.out"
	[ $ERR_RC -lt 124 ] || fail "\`$*\` exited $ERR_RC (crash, signal or timeout)" "$f.err"
	[ -n "$ERR_LINE" ] || fail "\`$*\` failed (exit $ERR_RC) without saying why on stderr" "$f.err"
	case $ERR_LINE in argus*) ;; *) fail "\`$*\`: the error line does not name the command: $ERR_LINE" "$f.err" ;; esac
	printf '%s\n' "$ERR_LINE" | has -iE -- "$re" ||
		fail "\`$*\`: the error line does not match /$re/: $ERR_LINE" "$f.err"
}
