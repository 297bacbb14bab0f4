#!/bin/bash
# e2e: a poll() on one fd records that fd's object at the blocking switch
# (kernel-patch/argus.bpf.c, poll_one_obj()), as a read() on it would:
# dbus-send's reply wait, and any client blocked on its one connection, is
# then a wait on its connection, whose other end the live holders can find.
# A poll() on two fds waits on no single object and records none.
# Ground truth: the app's own fstat() of its socket and of its peer.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
command -v python3 >/dev/null || fail "python3 is needed"

cat >"$T/poll.py" <<'PY'
import os, select, socket, time
a, b = socket.socketpair()
c, d = socket.socketpair()
print("PID=%d" % os.getpid())
print("A_INO=%d" % os.fstat(a.fileno()).st_ino)
print("B_INO=%d" % os.fstat(b.fileno()).st_ino)
print("C_INO=%d" % os.fstat(c.fileno()).st_ino, flush=True)
one = select.poll(); one.register(a, select.POLLIN)
one.poll(150)                               # one fd: times out, blocked 150 ms
two = select.poll(); two.register(a, select.POLLIN); two.register(c, select.POLLIN)
two.poll(160)                               # two fds: no single object
PY
record poll -- python3 "$T/poll.py"
P=$(kv PID); A=$(kv A_INO); B=$(kv B_INO)
dump_to "$TRACE" "$T/d"
grep " $P/$P .*blocked_in poll(" "$T/d" >"$T/polls" || fail "no blocking poll of python3 $P in the trace" "$T/d"
log "python3's blocking polls: $(wc -l <"$T/polls")"
want=$(printf 'obj=unix:0x%x->0x%x' "$A" "$B")
grep -q "blocked_in poll(0x8f0d180) $want\$" "$T/polls" ||
	fail "the one-fd poll (150 ms) does not record its socket as $want" "$T/polls"
grep "blocked_in poll(0x9896800)" "$T/polls" >"$T/two" ||
	fail "the two-fd poll (160 ms) is missing" "$T/polls"
grep -q "obj=" "$T/two" && fail "the two-fd poll records an object" "$T/two"
pass "a one-fd poll records its socket ($want), a two-fd poll none"
