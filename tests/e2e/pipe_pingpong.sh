#!/bin/bash
# e2e: a pipe ping-pong between two processes (tests/apps/pipe_pingpong).
# Pipe A carries "ping" from the parent (writer W) to the child (reader R).
# Asserts, against the inode and tids the app printed:
#   - a waking in task context (no ctx= field) by W whose target is R;
#   - R's switch-out blocked_in read(...) with obj=pipe:<A>;
#   - W's sys_exit write and R's sys_exit read both carry obj=pipe:<A>;
#   - order: W's write sys_enter on A's fd, then W's waking of R, then R's
#     read sys_exit on A.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

record pp -- "$APPS/pipe_pingpong" 20 2000
dump_to "$TRACE" "$T/pp.dump"

export W=$(kv PARENT_TID) R=$(kv CHILD_TID) INO=$(kv PIPE_A_INO) WFD=$(kv PIPE_A_WFD)
log "writer tid $W, reader tid $R, pipe A inode $INO ($(printf '%#x' "$INO")), write fd $WFD"

check_dump "$T/pp.dump" '
my ($W, $R, $INO, $WFD) = @ENV{qw(W R INO WFD)};
my $bad = 0;
my @wk = grep { $_->{type} eq "waking" && $_->{tid} == $W && ($_->{target_tid} // -1) == $R } @ev;
my @wk_task = grep { $_->{ctx} eq "task" } @wk;
if (!@wk_task) {
	print STDERR "FAIL: no waking in task context by the writer $W targeting the reader $R\n";
	print STDERR "  wakings targeting $R:\n"; show(grep { $_->{type} eq "waking" && ($_->{target_tid} // -1) == $R } @ev);
	$bad = 1;
} else { printf STDERR "ok: %d task-context wakings %s -> %s, e.g.\n    %s\n", scalar @wk_task, $W, $R, $wk_task[0]{line}; }

my @sw = grep { $_->{type} eq "switch" && $_->{tid} == $R && ($_->{blocked} // "") eq "read" } @ev;
my @sw_obj = grep { ($_->{okind} // "") eq "pipe" && $_->{obj} == $INO } @sw;
if (!@sw_obj) {
	print STDERR "FAIL: no switch of the reader $R blocked_in read(...) with obj=pipe:" . h($INO) . "\n";
	print STDERR "  the reader\x27s switch-outs:\n"; show(grep { $_->{type} eq "switch" && $_->{tid} == $R } @ev);
	$bad = 1;
} else { printf STDERR "ok: %d blocking switches of the reader in read on the pipe, e.g.\n    %s\n", scalar @sw_obj, $sw_obj[0]{line}; }

for my $c ([$W, "write"], [$R, "read"]) {
	my ($tid, $sys) = @$c;
	my @all = grep { $_->{type} eq "sys_exit" && $_->{tid} == $tid && ($_->{sys} // "") eq $sys } @ev;
	my @ok = grep { ($_->{okind} // "") eq "pipe" && $_->{obj} == $INO } @all;
	if (!@ok) {
		print STDERR "FAIL: no sys_exit $sys by $tid with obj=pipe:" . h($INO) . "\n";
		print STDERR "  its $sys exits:\n"; show(@all);
		$bad = 1;
	} else { printf STDERR "ok: %d sys_exit %s by %s on the pipe, e.g.\n    %s\n", scalar @ok, $sys, $tid, $ok[0]{line}; }
}

# order: write sys_enter (fd A) < waking W->R < read sys_exit by R on A,
# each the next such event after the previous one.
my $found = 0;
for (my $i = 0; $i < @ev && !$found; $i++) {
	my $e = $ev[$i];
	next unless $e->{type} eq "sys_enter" && $e->{tid} == $W && ($e->{sys} // "") eq "write" && $e->{args}[0] == $WFD;
	my ($j, $k);
	for ($j = $i + 1; $j < @ev; $j++) {
		my $x = $ev[$j];
		last if $x->{type} eq "sys_enter" && $x->{tid} == $W && ($x->{sys} // "") eq "write";
		last if $x->{type} eq "waking" && $x->{tid} == $W && ($x->{target_tid} // -1) == $R;
	}
	next unless $j < @ev && $ev[$j]{type} eq "waking";
	for ($k = $j + 1; $k < @ev; $k++) {
		my $x = $ev[$k];
		last if $x->{type} eq "sys_exit" && $x->{tid} == $R && ($x->{sys} // "") eq "read";
	}
	next unless $k < @ev && ($ev[$k]{okind} // "") eq "pipe" && $ev[$k]{obj} == $INO;
	next unless $e->{ts} <= $ev[$j]{ts} && $ev[$j]{ts} <= $ev[$k]{ts};
	$found = 1;
	print STDERR "ok: order write enter -> waking -> read exit:\n    $e->{line}\n    $ev[$j]{line}\n    $ev[$k]{line}\n";
}
if (!$found) {
	print STDERR "FAIL: never saw the writer\x27s write sys_enter on fd $WFD, then its waking of $R, then $R\x27s read sys_exit on the pipe\n";
	show(grep { ($_->{tid} == $W || $_->{tid} == $R) && $_->{type} =~ /^(sys_enter|sys_exit|waking)$/ } @ev);
	$bad = 1;
}
exit $bad;
' || fail "pipe ping-pong events are missing or wrong (see above)"
pass "pipe: task-context waking writer->reader, blocked_in read on pipe:$INO, matching objects, ordered"
