#!/bin/bash
# e2e: a timed sleep (tests/apps/timed_sleep: 5 x nanosleep 50 ms).
# Asserts an hrtimer_start by the sleeper's tid, then an hrtimer_expire
# with ctx=hardirq on the same timer=, then a waking with ctx=hardirq
# vec=hrtimer timer=<same> target=<sleeper>.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

record ts -- "$APPS/timed_sleep" 5 50
dump_to "$TRACE" "$T/ts.dump"

export S=$(kv SLEEPER_TID)
log "sleeper tid $S"

check_dump "$T/ts.dump" '
my $S = $ENV{S};
my @starts = grep { $_->{type} eq "hrtimer_start" && $_->{tid} == $S && defined $_->{timer} } @ev;
if (!@starts) {
	print STDERR "FAIL: no hrtimer_start by the sleeper $S\n  its events:\n"; show(grep { $_->{tid} == $S } @ev);
	exit 1;
}
printf STDERR "ok: %d hrtimer_start by %s, e.g.\n    %s\n", scalar @starts, $S, $starts[0]{line};
my $chains = 0;
my @shown;
for my $s (@starts) {
	my $i = $s->{n};
	my ($x) = grep { $_->{type} eq "hrtimer_expire" && ($_->{timer} // "") eq $s->{timer} && $_->{ts} >= $s->{ts} } @ev;
	next unless $x && $x->{ctx} eq "hardirq";
	my ($w) = grep { $_->{type} eq "waking" && ($_->{target_tid} // -1) == $S && $_->{ts} >= $x->{ts} } @ev;
	next unless $w && $w->{ctx} eq "hardirq" && ($w->{vec} // "") eq "hrtimer" && ($w->{timer} // "") eq $s->{timer};
	@shown = ($s, $x, $w) unless @shown;
	$chains++;
}
if (!$chains) {
	print STDERR "FAIL: no hrtimer_start(sleeper) -> hrtimer_expire ctx=hardirq -> waking ctx=hardirq vec=hrtimer timer=same target=$S\n";
	my %t = map { $_->{timer} => 1 } @starts;
	print STDERR "  events on the sleeper\x27s timers and wakings of the sleeper:\n";
	show(grep { ($_->{timer} && $t{$_->{timer}}) || ($_->{type} eq "waking" && ($_->{target_tid} // -1) == $S) } @ev);
	exit 1;
}
print STDERR "ok: $chains of " . scalar(@starts) . " sleeps show arm -> fire (hardirq) -> wake, e.g.\n";
print STDERR "    $_->{line}\n" for @shown;
exit 0;
' || fail "timed sleep timer events are missing or wrong (see above)"
pass "timer: armed by the sleeper, fired in hard-irq, woke the sleeper (same timer)"
