#!/bin/bash
# e2e: a futex handoff between two threads through a pthread mutex + cond
# (tests/apps/futex_handoff).  B posts and signals, A waits.  Asserts:
#   - a waking in task context by B targeting A;
#   - A's switch-out blocked_in futex(UADDR);
#   - a sys_enter futex by B whose uaddr (first arg) is such a UADDR, and
#     that uaddr lies inside the condition variable the app printed.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

record fh -- "$APPS/futex_handoff" 10 5000
dump_to "$TRACE" "$T/fh.dump"

export A=$(kv A_TID) B=$(kv B_TID) COND=$(kv COND_ADDR) CSIZE=$(kv COND_SIZE)
log "waiter A tid $A, signaller B tid $B, cond at $COND ($CSIZE bytes)"

check_dump "$T/fh.dump" '
my ($A, $B, $COND, $CSIZE) = ($ENV{A}, $ENV{B}, num($ENV{COND}), $ENV{CSIZE});
my $bad = 0;
my @wk = grep { $_->{type} eq "waking" && $_->{tid} == $B && ($_->{target_tid} // -1) == $A && $_->{ctx} eq "task" } @ev;
if (!@wk) {
	print STDERR "FAIL: no waking in task context by B ($B) targeting A ($A)\n  wakings targeting A:\n";
	show(grep { $_->{type} eq "waking" && ($_->{target_tid} // -1) == $A } @ev);
	$bad = 1;
} else { printf STDERR "ok: %d task-context wakings B -> A, e.g.\n    %s\n", scalar @wk, $wk[0]{line}; }

my @sw = grep { $_->{type} eq "switch" && $_->{tid} == $A && ($_->{blocked} // "") eq "futex" } @ev;
my %uaddr = map { $_->{barg} => 1 } @sw;
if (!@sw) {
	print STDERR "FAIL: no switch of A ($A) blocked_in futex(...)\n  A\x27s switch-outs:\n";
	show(grep { $_->{type} eq "switch" && $_->{tid} == $A } @ev);
	$bad = 1;
} else { printf STDERR "ok: %d switches of A blocked in futex, uaddrs %s\n    %s\n", scalar @sw, join(",", map { h($_) } sort keys %uaddr), $sw[0]{line}; }

my @be = grep { $_->{type} eq "sys_enter" && $_->{tid} == $B && ($_->{sys} // "") eq "futex" } @ev;
my @match = grep { $uaddr{$_->{args}[0]} } @be;
if (!@match) {
	print STDERR "FAIL: no futex sys_enter by B ($B) on an address A blocked on (" . join(",", map { h($_) } sort keys %uaddr) . ")\n  B\x27s futex calls:\n";
	show(@be);
	$bad = 1;
} else {
	printf STDERR "ok: %d futex calls of B on the uaddr A blocked on, e.g.\n    %s\n", scalar @match, $match[0]{line};
	my @in = grep { $_->{args}[0] >= $COND && $_->{args}[0] < $COND + $CSIZE } @match;
	if (!@in) {
		printf STDERR "FAIL: the matching uaddr %s is not inside the condition variable [%s, +%d)\n", h($match[0]{args}[0]), h($COND), $CSIZE;
		$bad = 1;
	}
}
exit $bad;
' || fail "futex handoff events are missing or wrong (see above)"
pass "futex: task-context waking B->A, A blocked_in futex on the uaddr B woke"
