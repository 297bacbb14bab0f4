#!/bin/bash
# e2e (security): root's CLI parses other users' files only in the
# sandboxed helper (symbols/symbolize.h, docs/collector.md "Root's CLI
# symbolizes through the same helper").  nobody runs its own copy of the
# busy_nofp app (DWARF, no frame pointers) from a directory it owns, under
# `argus record`; then root runs `argus dump --stacks` on the trace.
# Asserts: the dump names busy_leaf, followed by busy_middle, from
# nobody's file; under strace, a child of the CLI re-exec'd the argus
# binary as `argus-unwind`, dropped to another uid and installed a seccomp
# filter (the parsing happens there: test_symbols checks that the answers
# come from it); and the dump is byte for byte the same as with
# ARGUS_SYMBOLIZE_INPROCESS=1 (the in-process parse), so the sandbox loses
# no frame.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
command -v strace >/dev/null || fail "strace is needed (scripts/install-deps.sh installs it)"

# nobody's own program: a copy it owns, in its directory
cp "$APPS/busy_nofp" "$ATT/busy_nofp"
chown 65534:65534 "$ATT/busy_nofp"
record busy -- setpriv --reuid=65534 --regid=65534 --clear-groups "$ATT/busy_nofp" 2
PID=$(kv PID)

# the sandboxed dump (the CLI's default), traced for who did what
# (LeakSanitizer cannot run under ptrace: in the sanitizer build the leak
# check is left to the untraced dump below)
timeout -k 5 120 env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -qq -o "$T/strace.out" -e trace=execve,setresuid,prctl,seccomp \
	"$ARGUS" dump "$TRACE" --stacks --pid "$PID" >"$T/box.dump" 2>"$T/box.err" ||
	fail "argus dump --stacks (sandboxed, under strace) failed" "$T/box.err"
grep -q 'busy_leaf+0x' "$T/box.dump" || fail "the sandboxed dump names no busy_leaf frame" "$T/box.dump"
# the same dump, with its JSON, read frame by frame
dump_to "$TRACE" "$T/boxj.dump" --stacks --pid "$PID"
cmp -s "$T/box.dump" "$T/boxj.dump" || fail "the dump differs between two sandboxed runs" "$T/boxj.dump"
check_dump "$T/boxj.dump" '
if not any(0 <= frame_at(e, "busy_leaf") < frame_at(e, "busy_middle") for e in ev):
	say("FAIL: no stack has a busy_leaf frame followed by busy_middle"); sys.exit(1)
' ||
	fail "no busy_leaf frame is followed by busy_middle (DWARF unwinding of nobody's file)" "$T/box.dump"
log "sandboxed dump: $(grep -c 'busy_leaf+0x' "$T/box.dump") busy_leaf frames"

# the helper: a child that exec'd the argus binary as argus-unwind, became
# another user and installed its seccomp filter
hpid=$(awk '/execve\("\/proc\/self\/exe", \["argus-unwind"\]/ { print $1; exit }' "$T/strace.out")
[ -n "$hpid" ] || fail "no child exec'd /proc/self/exe as argus-unwind: root's CLI parsed in its own process" "$T/strace.out"
grep -E "^$hpid +setresuid\(([1-9][0-9]*), \1, \1\) += 0" "$T/strace.out" >/dev/null ||
	fail "the helper ($hpid) did not drop to another uid" "$T/strace.out"
grep -E "^$hpid +(prctl\(PR_SET_SECCOMP|seccomp\().*= 0" "$T/strace.out" >/dev/null ||
	fail "the helper ($hpid) installed no seccomp filter" "$T/strace.out"
root_pid=$(awk 'NR==1 { print $1 }' "$T/strace.out")
[ "$root_pid" != "$hpid" ] || fail "the helper is the CLI itself" "$T/strace.out"
log "helper $hpid: exec'd as argus-unwind, $(grep -E "^$hpid +setresuid" "$T/strace.out" | head -n1 | sed 's/^[0-9]* *//'), seccomp on"

# the same frames untraced (under ASan: with its leak check) and in process
timeout -k 5 120 "$ARGUS" dump "$TRACE" --stacks --pid "$PID" >"$T/box2.dump" 2>"$T/box2.err" ||
	fail "argus dump --stacks (sandboxed) failed" "$T/box2.err"
cmp -s "$T/box.dump" "$T/box2.dump" || fail "the sandboxed dump differs under strace and without" "$T/box2.err"
ARGUS_SYMBOLIZE_INPROCESS=1 timeout -k 5 120 "$ARGUS" dump "$TRACE" --stacks --pid "$PID" \
	>"$T/local.dump" 2>"$T/local.err" || fail "argus dump --stacks (in process) failed" "$T/local.err"
cmp -s "$T/box.dump" "$T/local.dump" ||
	{ diff "$T/local.dump" "$T/box.dump" | head -n 40 >"$T/diff"; fail "the sandboxed dump differs from the in-process one" "$T/diff"; }
log "the sandboxed and the in-process dump are identical ($(wc -l <"$T/box.dump") lines)"
pass "root's CLI symbolized nobody's file in an unprivileged, seccomp'd helper, with the same frames"
