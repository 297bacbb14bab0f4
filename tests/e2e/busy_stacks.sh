#!/bin/bash
# e2e: busy work in a named function is seen by the CPU sampler with a
# symbolized stack (tests/apps/busy.c: main -> busy_outer -> busy_middle ->
# busy_leaf, ~2 s), built without frame pointers (busy_nofp: the callers
# come from DWARF unwinding) and with them (busy_fp).
# Asserts, for each: busy_nofp's busy_leaf really does not push %rbp;
# `argus dump --stacks` has `sample` events of the app's tid, and some of
# them have busy_leaf with busy_middle and busy_outer below it, in order.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

# the premise: busy_nofp's leaf keeps no frame pointer, busy_fp's does
leaf_asm() { objdump -d --no-show-raw-insn "$1" | awk '/<busy_leaf>:$/{p=1;next} p&&/^$/{exit} p'; }
leaf_asm "$APPS/busy_nofp" >"$T/nofp.asm"
[ -s "$T/nofp.asm" ] || fail "no busy_leaf in $APPS/busy_nofp (objdump)"
if grep -qE 'push +%rbp|mov +%rsp,%rbp' "$T/nofp.asm"; then
	fail "busy_nofp's busy_leaf sets up a frame pointer; the app was not built with -fomit-frame-pointer" "$T/nofp.asm"
fi
leaf_asm "$APPS/busy_fp" >"$T/fp.asm"
grep -qE 'push +%rbp' "$T/fp.asm" || fail "busy_fp's busy_leaf does not push %rbp" "$T/fp.asm"
log "objdump: busy_nofp's busy_leaf keeps no frame pointer, busy_fp's does"

for app in busy_nofp busy_fp; do
	record "$app" -- "$APPS/$app" 2
	dump_to "$TRACE" "$T/$app.dump" --stacks
	export TID=$(kv TID) APP=$app
	check_dump "$T/$app.dump" '
my ($TID, $APP) = @ENV{qw(TID APP)};
my @s = grep { $_->{type} eq "sample" && $_->{tid} == $TID } @ev;
if (!@s) { print STDERR "FAIL: no sample events of $APP tid $TID\n"; show(grep { $_->{tid} == $TID } @ev); exit 1; }
sub at { my ($st, $fn) = @_; for my $i (0 .. $#$st) { return $i if $st->[$i] =~ /\s\Q$fn\E\+0x[0-9a-f]+\b|\s\Q$fn\E(\s|$)/; } return -1; }
my @leaf = grep { at($_->{stack}, "busy_leaf") >= 0 } @s;
my @full = grep { my ($l, $m, $o) = (at($_->{stack}, "busy_leaf"), at($_->{stack}, "busy_middle"), at($_->{stack}, "busy_outer")); $l >= 0 && $m > $l && $o > $m } @s;
printf STDERR "%s: %d samples of tid %d, %d with busy_leaf, %d with busy_leaf <- busy_middle <- busy_outer\n", $APP, scalar @s, $TID, scalar @leaf, scalar @full;
if (!@leaf) { print STDERR "FAIL: no sample of $APP has busy_leaf in its stack; samples:\n"; show(@s); exit 1; }
if (!@full) { print STDERR "FAIL: no sample of $APP unwinds busy_leaf to busy_middle and busy_outer; samples with busy_leaf:\n"; show(@leaf); exit 1; }
print STDERR "ok, e.g.:\n"; show($full[0]);
# most samples taken inside busy_leaf should unwind fully
if (@full * 2 < @leaf) { printf STDERR "FAIL: only %d of %d busy_leaf samples unwind to busy_outer\n", scalar @full, scalar @leaf; show(grep { my $x = $_; !grep { $_ == $x } @full } @leaf); exit 1; }
exit 0;
' || fail "$app: busy_leaf stacks not seen or not unwound (see above)"
done
pass "sampler: busy_leaf <- busy_middle <- busy_outer symbolized, with and without frame pointers"
