#!/bin/bash
# e2e: where syscall entries come from (docs/collector.md, "Where entries
# come from").  By default the entries of the entry set (futex, the poll
# family, ...) come from per-call tracepoints syscalls:sys_enter_NAME and
# no raw sys_enter program is attached, so read/write run no BPF on entry;
# --all-entries attaches the raw sys_enter program instead.  Asserts, for
# the argus record process's own attachments (bpftool perf show, taken from
# inside the recorded command) and for the trace of tests/apps/futex_handoff:
#   default:       sys_enter_futex attached, no raw sys_enter, raw sys_exit;
#                  B's futex entries recorded with their uaddr, and the
#                  app's write exits recorded without entries;
#   --all-entries: raw sys_enter attached, no per-call tracepoint; the
#                  app's write entries recorded too.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
command -v bpftool >/dev/null || fail "bpftool is needed (scripts/install-deps.sh installs it)"

# $PPID of the recorded shell is argus record: its attachments only, not
# those of any other tracer on the machine.
snap='bpftool perf show | grep "^pid $PPID " > "$0"; exec "$@"'

record def -- bash -c "$snap" "$T/def.perf" "$APPS/futex_handoff" 10 2000
dump_to "$TRACE" "$T/def.dump"
export A=$(kv A_TID) B=$(kv B_TID) APP=$(kv PID)
log "argus record's attachments: $(wc -l <"$T/def.perf") perf events"
grep -q ' tracepoint  sys_enter_futex$' "$T/def.perf" ||
	fail "no per-call tracepoint sys_enter_futex attached by argus record" "$T/def.perf"
grep -q ' raw_tracepoint  sys_enter$' "$T/def.perf" &&
	fail "argus record attached the raw sys_enter program by default" "$T/def.perf"
grep -q ' raw_tracepoint  sys_exit$' "$T/def.perf" ||
	fail "argus record did not attach the raw sys_exit program" "$T/def.perf"
check_dump "$T/def.dump" '
my ($B, $APP) = ($ENV{B}, $ENV{APP});
my @fx = grep { $_->{type} eq "sys_enter" && $_->{tid} == $B && ($_->{sys} // "") eq "futex" && $_->{args}[0] } @ev;
my @we = grep { $_->{type} eq "sys_enter" && $_->{pid} == $APP && ($_->{sys} // "") eq "write" } @ev;
my @wx = grep { $_->{type} eq "sys_exit" && $_->{pid} == $APP && ($_->{sys} // "") eq "write" } @ev;
if (!@fx) { print STDERR "FAIL: no sys_enter futex(uaddr) by B $B; its events:\n"; show(grep { $_->{tid} == $B } @ev); exit 1; }
if (@we) { print STDERR "FAIL: write entries recorded without --all-entries:\n"; show(@we); exit 1; }
if (!@wx) { print STDERR "FAIL: no write exit of the app $APP\n"; exit 1; }
printf STDERR "ok: %d futex entries by B, e.g.\n    %s\nok: %d write exits and no write entry\n", scalar @fx, $fx[0]{line}, scalar @wx;
exit 0;
' || fail "default syscall entries are wrong (see above)"

record all --all-entries -- bash -c "$snap" "$T/all.perf" "$APPS/futex_handoff" 10 2000
dump_to "$TRACE" "$T/all.dump"
export APP=$(kv PID)
grep -q ' raw_tracepoint  sys_enter$' "$T/all.perf" ||
	fail "--all-entries did not attach the raw sys_enter program" "$T/all.perf"
grep -q ' tracepoint  sys_enter_' "$T/all.perf" &&
	fail "--all-entries attached per-call tracepoints as well (entries twice)" "$T/all.perf"
check_dump "$T/all.dump" '
my $APP = $ENV{APP};
my @we = grep { $_->{type} eq "sys_enter" && $_->{pid} == $APP && ($_->{sys} // "") eq "write" } @ev;
if (!@we) { print STDERR "FAIL: --all-entries recorded no write entry of the app $APP\n"; exit 1; }
printf STDERR "ok: --all-entries: %d write entries, e.g.\n    %s\n", scalar @we, $we[0]{line};
exit 0;
' || fail "--all-entries syscall entries are wrong (see above)"
pass "entries from per-call tracepoints by default, from raw sys_enter with --all-entries"
