#!/bin/bash
# e2e: the always-on collector's life cycle, in a private run dir
# (ARGUS_RUN_DIR) and ring dir.  Asserts:
#   start works, a second start fails with "already running";
#   status prints events / lost / ring lines and a CPU% line, and its
#   CPU seconds leave out the BPF load before the start;
#   a mark is attributed to the process that sent it, not to 0/0;
#   mark TEXT + a workload + save --last 10s -o S: S dumps with the mark;
#   permissions: run dir 0711 (any process reaches interpose.sock by
#   name, docs/interposer.md; nothing can be listed), socket 0600, ring
#   0600, saved file 0600;
#   a non-root peer (uid 65534) is refused with a permission message;
#   a relative --hang-dir is the starter's directory's (argusd never
#   chdirs; it resolves the path itself since start hands the words on);
#   stop works and removes the socket.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

RING_DIR=$T/ring
mkdir "$T/cwd"
pushd "$T/cwd" >/dev/null
start_collector --dir "$RING_DIR" --size 64M --hang-dir rel-hangs
popd >/dev/null
SOCK=$ARGUS_RUN_DIR/argusd.sock
[ -S "$SOCK" ] || fail "no control socket $SOCK after start"
pid=$(collector_pid)
is_argusd "$pid" || fail "no argusd running with the pid in $ARGUS_RUN_DIR/argusd.pid ('$pid')"

expect_clean_error 'already running' "$ARGUS" start --dir "$RING_DIR" --size 64M
is_argusd "$pid" || fail "the second start killed the running collector"

"$ARGUS" status >"$T/status.out" 2>"$T/status.err" || fail "argus status failed" "$T/status.err"
for k in '^events' '^lost' '^ring'; do
	grep -qE "$k" "$T/status.out" || fail "argus status has no line matching $k" "$T/status.out"
done
log "status:"; sed 's/^/    /' "$T/status.out"
grep -qE "^ *hangs .* in $T/cwd/rel-hangs\$" "$T/status.out" ||
	fail "--hang-dir rel-hangs, given in $T/cwd, is not $T/cwd/rel-hangs" "$T/status.out"
# The BPF load before the start (0.3-0.4 s of argusd's CPU here, 0.5-0.6
# under ASan, by the figures below) must not count as the collector's
# running cost: status's cpu_seconds (argusd since its start, plus the
# unwind helper's) must stay below what the kernel says argusd and its
# helper used in all.  (This was a bound of 50% on the CPU% line right
# after start.  After the verifier fix, 31189d3, the status comes ~0.4 s
# after the start and under ASan the collector's own work since the
# start was 37-50% of that; why the bound held in every run before is
# not measured: the second `argus start` above asks the control socket
# and loads nothing.)
cpu=$(awk '$1 == "collector" && /% CPU/ { sub("%", "", $2); print $2; exit }' "$T/status.out")
[ -n "$cpu" ] || fail "status has no collector CPU% line" "$T/status.out"
"$ARGUS" status --raw >"$T/status.raw" 2>"$T/status.err" || fail "argus status --raw failed" "$T/status.err"
proc_cpu() {  # utime + stime of pid $1, in seconds (0 when it is gone)
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' \
		"/proc/$1/stat" 2>/dev/null || echo 0
}
reported=$(sed -n 's/^cpu_seconds=//p' "$T/status.raw")
helper=$(sed -n 's/^unwind_helper_pid=//p' "$T/status.raw")
all=$(awk -v a="$(proc_cpu "$pid")" -v h="$([ "${helper:-0}" != 0 ] && proc_cpu "$helper" || echo 0)" \
	'BEGIN { print a + h }')
[ -n "$reported" ] || fail "status --raw has no cpu_seconds" "$T/status.raw"
# a helper that died took its CPU with it from /proc, while status still
# counts it: then there is nothing to compare with
if [ "$(sed -n 's/^unwind_helper_restarts=//p' "$T/status.raw")" = 0 ]; then
	awk -v r="$reported" -v a="$all" 'BEGIN { exit !(r <= a - 0.05) }' ||
		fail "status counts ${reported} s of CPU, argusd and its helper used ${all} s in all: the BPF load before the start is counted" "$T/status.raw"
	log "collector CPU since its start ${reported} s, argusd and its helper in all ${all} s (the load before the start is not counted)"
else
	log "the unwind helper restarted: its CPU is no longer in /proc, the load check is skipped"
fi

"$ARGUS" mark "hello from test" 2>"$T/mark.err" || fail "argus mark failed" "$T/mark.err"
"$APPS/pipe_pingpong" 50 2000 >"$T/pp.out" || fail "the workload failed"
wpid=$(kv PARENT_PID "$T/pp.out")
sleep 1
S=$T/saved.argus
"$ARGUS" save --last 10s -o "$S" >"$T/save.out" 2>"$T/save.err" || fail "argus save --last 10s failed" "$T/save.err"
log "$(cat "$T/save.out")"
dump_to "$S" "$T/saved.dump"
grep -E ' mark +"hello from test"' "$T/saved.dump" >"$T/mark.lines" ||
	fail "the saved trace has no mark line with \"hello from test\"; its mark/first lines:" "$T/saved.dump"
log "mark: $(head -n 1 "$T/mark.lines")"
# the mark names who sent it (the argus CLI, from SO_PEERCRED), not 0/0
grep -qE '^ *swapper +0/0 ' "$T/mark.lines" &&
	fail "the mark is attributed to swapper 0/0, not to its sender" "$T/mark.lines"
grep -qE '^ *[^ ]+ +[1-9][0-9]*/[1-9][0-9]* ' "$T/mark.lines" ||
	fail "the mark line names no sender pid" "$T/mark.lines"
grep -qE "^ *pipe_pingpong +[0-9]+/$wpid " "$T/saved.dump" ||
	fail "the saved trace has no event of the workload (pid $wpid)" "$T/saved.dump"

# permissions: the trace sees every process, so everything is root's only
check_mode() {
	local m
	m=$(stat -c %a "$1") || fail "cannot stat $1"
	[ "$m" = "$2" ] || fail "$1 has mode $m, want $2"
	[ "$(stat -c %u "$1")" = 0 ] || fail "$1 is not owned by root"
	log "mode $m: $1"
}
check_mode "$ARGUS_RUN_DIR" 711
check_mode "$SOCK" 600
check_mode "$RING_DIR/ring.argus" 600
check_mode "$S" 600

# a non-root peer is refused.  Give it a copy of argus it can execute and
# the socket's path; the socket's mode (0600) and SO_PEERCRED must both
# stop it (the run dir is 0711 for the interposer's socket).
command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed"
PUB=$(mktemp -d /tmp/argus-e2e-pub.XXXXXX)
cp "$ARGUS" "$PUB/argus" && chmod 755 "$PUB" "$PUB/argus"
setpriv --reuid=65534 --regid=65534 --clear-groups env ARGUS_RUN_DIR="$ARGUS_RUN_DIR" \
	"$PUB/argus" status >"$T/nobody.out" 2>"$T/nobody.err"
rc=$?
log "status as uid 65534: exit $rc: $(head -n 1 "$T/nobody.err")"
[ $rc -ne 0 ] || { rm -rf "$PUB"; fail "a non-root peer got the status" "$T/nobody.out"; }
grep -qi 'permission' "$T/nobody.err" || { rm -rf "$PUB"; fail "the refusal does not mention permission" "$T/nobody.err"; }
# with the directories opened up, the socket's mode still refuses.  The
# mark goes straight to the control socket: a non-root `argus mark` would
# use the mark socket (mark_group.sh tests that one).
nobody_ctl_mark() {
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"mark from nobody\n")
s.shutdown(socket.SHUT_WR)
r = s.recv(4096).decode()
sys.stderr.write(r)
sys.exit(0 if r.rstrip().endswith("ok") else 1)' "$SOCK"
}
chmod 711 "$T"
chmod 755 "$ARGUS_RUN_DIR"
nobody_ctl_mark >"$T/nobody2.out" 2>"$T/nobody2.err"
rc=$?
log "mark as uid 65534 with the run dir opened: exit $rc: $(head -n 1 "$T/nobody2.err")"
# and with the socket opened too, only the daemon's SO_PEERCRED check is left
chmod 666 "$SOCK"
nobody_ctl_mark >"$T/nobody3.out" 2>"$T/nobody3.err"
rc3=$?
chmod 600 "$SOCK"
chmod 711 "$ARGUS_RUN_DIR"
chmod 700 "$T"
rm -rf "$PUB"
log "mark as uid 65534 with the socket opened too: exit $rc3: $(head -n 1 "$T/nobody3.err")"
[ $rc -ne 0 ] || fail "a non-root peer could send a mark once it could reach the socket" "$T/nobody2.out"
grep -qi 'permission' "$T/nobody2.err" || fail "the refusal does not mention permission" "$T/nobody2.err"
[ $rc3 -ne 0 ] || fail "SO_PEERCRED: a non-root peer could send a mark through a 0666 socket" "$T/nobody3.out"
grep -qi 'permission' "$T/nobody3.err" || fail "the SO_PEERCRED refusal does not mention permission" "$T/nobody3.err"

"$ARGUS" save -o "$T/all.argus" >/dev/null 2>"$T/save2.err" || fail "argus save (whole ring) failed" "$T/save2.err"
dump_to "$T/all.argus" "$T/all.dump"
grep 'from nobody' "$T/all.dump" >"$T/nobody.mark" && fail "a mark sent by uid 65534 reached the trace" "$T/nobody.mark"
"$ARGUS" stop >"$T/stop.out" 2>"$T/stop.err" || fail "argus stop failed" "$T/stop.err"
[ ! -e "$SOCK" ] || fail "the socket $SOCK is still there after stop"
for _ in $(seq 20); do is_argusd "$pid" || break; sleep 0.25; done
is_argusd "$pid" && fail "argusd ($pid) still runs after stop"
expect_clean_error 'not running' "$ARGUS" status
pass "start/status/mark/save/stop, already-running, modes 0711/0600, non-root refused"
