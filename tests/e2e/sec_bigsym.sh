#!/bin/bash
# e2e (security, issue 25 F8): root's `argus instrument` reads a user's ELF
# within the same bounds as the collector and the symbolizer
# (argus_elf_guard__check()).  As nobody: a program (tests/e2e/sec/
# symwait.c) whose .symtab claims 1 GiB (44.7 M zero symbols: a sparse
# hole at the end of the file, tests/e2e/sec/bigsym.py) waits in pause();
# root instruments its target_function.  Before the fix libelf read and
# scanned all of it: 4 to 5 s and 1.05 GB in root's CLI.
# Asserts: the instrument is refused with a clear error naming the limits,
# in under 1 s of wall time and under 64 MiB of RSS; and the same program
# without the bloated table is instrumented (--count-only) as before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
sec_build symwait
mkdir "$ATT/big"
# a whole number of 24-byte symbols (libelf refuses a ragged table cheaply)
/usr/bin/python3 "$(dirname "$0")/sec/bigsym.py" "$PUBDIR/symwait" "$ATT/big/symwait" $((0x40000000 / 24 * 24)) \
	>"$T/bigsym.out" 2>&1 || fail "cannot make the 1 GiB .symtab" "$T/bigsym.out"
chown -R 65534:65534 "$ATT/big"
chmod 755 "$ATT/big/symwait"
log "$(ls -ls "$ATT/big/symwait")"
sec_start --no-watch-interactive

start() {
	as_nobody "$1" >"$T/$2.out" 2>"$T/$2.err" &
	E2E_PIDS+=($!)
	for _ in $(seq 100); do grep -q '^pid ' "$T/$2.out" && break; sleep 0.05; done
	grep -q '^pid ' "$T/$2.out" || fail "$1 did not start" "$T/$2.err"
	read -r _ PID <"$T/$2.out"
	E2E_PIDS+=("$PID")	# $! is as_nobody's subshell; this is the program
}

start "$ATT/big/symwait" big
/usr/bin/time -f '%e %M' -o "$T/time" timeout -k 5 20 "$ARGUS" instrument --pid "$PID" \
	--func target_function --as begin --count-only >"$T/i.out" 2>"$T/i.err"
rc=$?
read -r secs kb < <(tail -n 1 "$T/time")
log "instrument of the 1 GiB .symtab: exit $rc in $secs s, max RSS $kb kB: $(cat "$T/i.err")"
awk -v s="$secs" 'BEGIN { exit !(s < 1.0) }' || fail "the refusal took $secs s"
[ "$kb" -lt 65536 ] || fail "the refusal cost $kb kB of RSS"
[ $rc = 1 ] || fail "instrument of a 1 GiB .symtab: exit $rc, expected a refusal (1)" "$T/i.err"
grep -q '^argus instrument: .*refused: a section or header table is larger than argus reads' "$T/i.err" ||
	fail "the refusal does not say why" "$T/i.err"
kill "$PID"

# the same program, its symbols intact: instrumented
start "$PUBDIR/symwait" small
"$ARGUS" instrument --pid "$PID" --func target_function --as begin --count-only >"$T/s.out" 2>"$T/s.err" ||
	fail "instrument of the intact program failed" "$T/s.err"
log "$(cat "$T/s.out")"
"$ARGUS" instrument --pid "$PID" --func target_function --remove >"$T/r.out" 2>"$T/r.err" ||
	fail "--remove failed" "$T/r.err"
kill "$PID"
pass "a 1 GiB .symtab: refused by the ELF guard in $secs s and $kb kB; an intact one instrumented"
