# sec_lib.sh - helpers of the security tests (sourced after lib.sh).
#
# The attacker is `nobody` (uid 65534), in a directory of its own:
#   sec_init            $PUBDIR (755, root's) holding $ATT (nobody's, 755),
#                       and $ATTBIN, the attack programs of tests/e2e/sec/
#                       compiled into $PUBDIR where nobody can run them
#   as_nobody CMD...    runs CMD as uid/gid 65534 with no groups
#   sec_start [OPTS]    a private collector (ring dir $T/ring, 64M)
#   status_within_1s    `argus status` must answer within a second (one
#                       late answer forgiven, see below); sets
#                       $STATUS (the file holding it) and $STATUS_MS
#                       (how long it took)
#   status_key KEY      a KEY=VALUE from the daemon's raw status (control
#                       socket text, not the pretty print)

command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed"
command -v cc >/dev/null || fail "a C compiler (cc) is needed to build the attack programs"

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

sec_init() {
	PUBDIR=$(mktemp -d /tmp/argus-e2e-pub.XXXXXX)
	chmod 755 "$PUBDIR"
	ATT=$PUBDIR/att
	mkdir "$ATT"
	chown 65534:65534 "$ATT"
	chmod 755 "$ATT"
	E2E_PUBDIRS+=("$PUBDIR")
	trap 'sec_cleanup' EXIT
}

E2E_PUBDIRS=()
sec_cleanup() {
	local rc=$? d
	# the collectors first: mark_group's run dir is under its PUBDIR
	e2e_stop_collectors
	for d in "${E2E_PUBDIRS[@]}"; do rm -rf "$d"; done
	(exit $rc)
	e2e_cleanup
}

# sec_build NAME: compiles tests/e2e/sec/NAME.c into $PUBDIR/NAME.
sec_build() {
	cc -O1 -o "$PUBDIR/$1" "$(dirname "${BASH_SOURCE[0]}")/sec/$1.c" 2>"$T/cc.$1.err" ||
		fail "cannot compile the attack program $1" "$T/cc.$1.err"
	chmod 755 "$PUBDIR/$1"
}

sec_start() {
	mkdir -p "$T/ring"
	start_collector --dir "$T/ring" --size 64M "$@"
	ARGUSD_PID=$(collector_pid)
	is_argusd "$ARGUSD_PID" || fail "no argusd after start"
}

# The daemon's own status lines (KEY=VALUE), through the control socket,
# within a second.
#
# The client, and the clock that times it, run at argusd's own priority
# (nice -20): what is measured is argusd's answer, not the CPU share of a
# nice-0 client and of this shell beside the attacker's busy processes.
# In sec_interpose_share's flood (16 of them on 2 CPUs) this shell's
# polling loop alone took 1.4 s while the ASan client had answered long
# before (measured: the client done, the loop not), and two such "late"
# answers failed CI's ASan run.
#
# A stall that a user causes lasts as long as the attack, so one late
# answer (1-10 s) is logged with argusd's thread states and forgiven;
# a second one in the same test, or none within 10 s, fails.  Why one: the
# second is wall clock on a shared 2-core machine, and includes the start
# of the (ASan) CLI; CI saw one 1 s miss in ~60 runs of these tests that
# no rerun reproduced (quiet or with 3 busy loops beside it: 20-100 ms).
STATUS_LATE=0
status_within_1s() {
	local ms rc
	STATUS=$T/status.$RANDOM
	export ARGUSD_PID
	export -f argusd_threads
	# at 1 s, if no answer yet: what argusd is doing while it is late
	nice -n -20 bash -c '
		t0=$(date +%s%N)
		timeout 10 "$0" status --raw >"$1" 2>"$1.err" &
		pid=$!
		for i in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
		kill -0 "$pid" 2>/dev/null && argusd_threads >"$1.late"
		wait "$pid"
		echo "$? $(( ($(date +%s%N) - t0) / 1000000 ))" >"$1.time"' "$ARGUS" "$STATUS"
	read -r rc ms <"$STATUS.time"
	STATUS_MS=$ms
	[ "$rc" = 0 ] && [ "$ms" -le 1000 ] && return 0
	[ -s "$STATUS.late" ] && cat "$STATUS.late" >>"$STATUS.err"
	[ "$rc" = 0 ] ||
		fail "argus status did not answer within 10 s (exit $rc): the collector is stuck or dead" "$STATUS.err"
	STATUS_LATE=$((STATUS_LATE + 1))
	log "argus status answered in $ms ms (late answer $STATUS_LATE); argusd's threads at 1 s:"
	sed 's/^/    /' "$STATUS.err" >&2
	[ "$STATUS_LATE" -le 1 ] ||
		fail "argus status answered late twice (the last in $ms ms): something holds the collector" "$STATUS.err"
}

# argusd's threads: name, state, wait channel, kernel stack.
argusd_threads() {
	local d
	for d in /proc/"$ARGUSD_PID"/task/*; do
		echo "$(cat "$d/comm" 2>/dev/null) state=$(awk '{print $3}' "$d/stat" 2>/dev/null) wchan=$(cat "$d/wchan" 2>/dev/null)"
		sed 's/^/      /' "$d/stack" 2>/dev/null | head -n 8
	done
}

status_key() {
	sed -n "s/^$1=//p" "$STATUS" | head -n 1
}


# still_recording WHAT: argusd is alive, answers within a second, and its
# event count grows.
still_recording() {
	local a b
	is_argusd "$ARGUSD_PID" || fail "argusd (pid $ARGUSD_PID) died after $1"
	status_within_1s
	a=$(status_key events)
	sleep 0.6
	status_within_1s
	b=$(status_key events)
	[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] ||
		fail "after $1 the collector's event count does not grow ($a -> $b)" "$STATUS"
	log "after $1: argusd answers within 1 s, events $a -> $b"
}
