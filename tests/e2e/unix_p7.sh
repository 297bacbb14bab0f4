#!/bin/bash
# e2e: a unix-socket request/reply where the reply is sent by a different
# thread (W) than the one that received the request (R): the paper's P7
# (tests/apps/unix_p7).  X = client end's inode, Y = server end's.  Asserts:
#   - the client's send sys_exit has obj=unix:X->Y;
#   - R's recv sys_exit has obj=unix:Y->X (send.obj == recv.peer and
#     send.peer == recv.obj);
#   - W's send sys_exit has obj=unix:Y->X, the client's recv obj=unix:X->Y;
#   - R never sends and W never receives on the socket: the reply comes
#     from a different thread.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

record p7 -- "$APPS/unix_p7" 10 2000
dump_to "$TRACE" "$T/p7.dump"

export C=$(kv CLIENT_TID) R=$(kv R_TID) W=$(kv W_TID) X=$(kv CLIENT_INO) Y=$(kv SERVER_INO)
log "client tid $C, receiver R $R, worker W $W, client inode X=$X ($(printf '%#x' "$X")), server inode Y=$Y ($(printf '%#x' "$Y"))"
[ "$R" != "$W" ] || fail "the app's receiver and worker threads are the same ($R)"

check_dump "$T/p7.dump" '
my ($C, $R, $W, $X, $Y) = @ENV{qw(C R W X Y)};
my $bad = 0;
sub io { my ($tid, $dir) = @_; return grep { $_->{type} eq "sys_exit" && $_->{tid} == $tid && ($_->{sys} // "") =~ /^$dir/ && $_->{ret} > 0 } @ev; }
for my $c (["client", $C, "send", $X, $Y], ["R", $R, "recv", $Y, $X], ["W", $W, "send", $Y, $X], ["client", $C, "recv", $X, $Y]) {
	my ($who, $tid, $dir, $o, $p) = @$c;
	my @all = io($tid, $dir);
	my @ok = grep { ($_->{okind} // "") eq "unix" && $_->{obj} == $o && $_->{peer} == $p } @all;
	if (!@ok) {
		printf STDERR "FAIL: no %s* sys_exit by %s (%s) with obj=unix:%s->%s\n  its %s* exits:\n", $dir, $who, $tid, h($o), h($p), $dir;
		show(@all);
		$bad = 1;
	} else { printf STDERR "ok: %d %s* by %s with obj=unix:%s->%s, e.g.\n    %s\n", scalar @ok, $dir, $who, h($o), h($p), $ok[0]{line}; }
}
# the reply is sent by W, not by R; the request is received by R, not by W
my @rsend = grep { ($_->{okind} // "") eq "unix" } io($R, "send");
my @wrecv = grep { ($_->{okind} // "") eq "unix" } io($W, "recv");
if (@rsend || @wrecv) {
	print STDERR "FAIL: R sent or W received on the socket (the app does neither):\n"; show(@rsend, @wrecv);
	$bad = 1;
}
# each request received by R is answered by W later on the same object pair
my $pairs = 0;
for my $r (grep { ($_->{okind} // "") eq "unix" && $_->{obj} == $Y } io($R, "recv")) {
	$pairs++ if grep { $_->{ts} >= $r->{ts} && ($_->{okind} // "") eq "unix" && $_->{obj} == $Y } io($W, "send");
}
if (!$pairs) { print STDERR "FAIL: no send by W after a recv by R on the server end\n"; $bad = 1; }
else { print STDERR "ok: $pairs requests received by R ($R) were followed by a reply from W ($W)\n"; }
exit $bad;
' || fail "unix-socket P7 events are missing or wrong (see above)"
pass "unix P7: send/recv objects match across processes and threads (X=$X, Y=$Y), reply from W != R"
