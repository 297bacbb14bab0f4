#!/bin/bash
# e2e: a pipe ping-pong between two processes (tests/apps/pipe_pingpong).
# Pipe A carries "ping" from the parent (writer W) to the child (reader R).
# Asserts, against the inode and tids the app printed:
#   - a waking in task context (no ctx= field) by W whose target is R;
#   - R's switch-out blocked_in read(...) with obj=pipe:<A>;
#   - W's sys_exit write and R's sys_exit read both carry obj=pipe:<A>;
#   - order: W's waking of R, then W's write sys_exit on A's fd (the
#     waking happens inside the write), and R's read sys_exit on A after
#     the waking;
#   - no sys_enter of write: the entries of message calls are not recorded
#     by default (their exit carries the fd, object and result).
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

# order: waking W->R, then the next write exit of W is on fd A with obj A,
# and the next read exit of R after the waking is on A.
my $found = 0;
for (my $j = 0; $j < @ev && !$found; $j++) {
	my $w = $ev[$j];
	next unless $w->{type} eq "waking" && $w->{tid} == $W && ($w->{target_tid} // -1) == $R;
	my ($k1, $k2);
	for ($k1 = $j + 1; $k1 < @ev; $k1++) {
		my $x = $ev[$k1];
		last if $x->{type} eq "sys_exit" && $x->{tid} == $W && ($x->{sys} // "") eq "write";
	}
	next unless $k1 < @ev && $ev[$k1]{arg0} == $WFD && ($ev[$k1]{okind} // "") eq "pipe" && $ev[$k1]{obj} == $INO;
	for ($k2 = $j + 1; $k2 < @ev; $k2++) {
		my $x = $ev[$k2];
		last if $x->{type} eq "sys_exit" && $x->{tid} == $R && ($x->{sys} // "") eq "read";
	}
	next unless $k2 < @ev && ($ev[$k2]{okind} // "") eq "pipe" && $ev[$k2]{obj} == $INO;
	next unless $w->{ts} <= $ev[$k1]{ts} && $w->{ts} <= $ev[$k2]{ts};
	$found = 1;
	print STDERR "ok: order waking -> write exit (fd $WFD), and -> read exit:\n    $w->{line}\n    $ev[$k1]{line}\n    $ev[$k2]{line}\n";
}
if (!$found) {
	print STDERR "FAIL: never saw the writer\x27s waking of $R followed by its write sys_exit on fd $WFD and $R\x27s read sys_exit on the pipe\n";
	show(grep { ($_->{tid} == $W || $_->{tid} == $R) && $_->{type} =~ /^(sys_enter|sys_exit|waking)$/ } @ev);
	$bad = 1;
}
my @wenter = grep { $_->{type} eq "sys_enter" && ($_->{sys} // "") =~ /^(read|write)$/ } @ev;
if (@wenter) {
	print STDERR "FAIL: read/write entries are recorded, but only their exits should be by default:\n";
	show(@wenter);
	$bad = 1;
} else { print STDERR "ok: no read/write sys_enter (exits only, by default)\n"; }
exit $bad;
' || fail "pipe ping-pong events are missing or wrong (see above)"
pass "pipe: task-context waking writer->reader, blocked_in read on pipe:$INO, matching objects, ordered"
