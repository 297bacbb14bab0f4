# sec_lib.sh - helpers of the security tests (sourced after lib.sh).
#
# The attacker is `nobody` (uid 65534), in a directory of its own:
#   sec_init            $PUBDIR (755, root's) holding $ATT (nobody's, 755),
#                       and $ATTBIN, the attack programs of tests/e2e/sec/
#                       compiled into $PUBDIR where nobody can run them
#   as_nobody CMD...    runs CMD as uid/gid 65534 with no groups
#   sec_start [OPTS]    a private collector (ring dir $T/ring, 64M)
#   status_within_1s    `argus status` must answer within a second; sets
#                       $STATUS (the file holding it)
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
status_within_1s() {
	STATUS=$T/status.$RANDOM
	timeout 1 "$ARGUS" status --raw >"$STATUS" 2>"$STATUS.err" ||
		fail "argus status did not answer within 1 s (exit $?): the collector is stuck or dead" "$STATUS.err"
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
