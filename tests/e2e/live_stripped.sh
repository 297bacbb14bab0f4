#!/bin/bash
# e2e: `argus instrument` on a function of a stripped binary from a Debian
# package (issue 14 §3): crc32 in libz.so.1 (zlib1g; no .symtab, crc32 is
# in .dynsym) inside a running python3 (tests/apps/live_crc.py, zlib.crc32
# is libz's crc32).  crc32's entry is `mov edx,edx; jmp crc32_z@plt`: the
# patch displaces a relative jmp, which the relocator must rewrite.
# Asserts:
#   - libz has no .symtab (the test means what it says);
#   - the entry equals the file's bytes before, is a jmp while patched;
#   - 50 CRCs computed while patched are all right, and the trampoline
#     counted exactly 50 calls;
#   - --remove: the bytes equal the file's again; 5 more CRCs are right;
#   - 8 patch/remove cycles while crc32 runs hot: every result right.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/live_lib.sh"
SRC=$(cd "$(dirname "$0")/../apps" && pwd)

live_start crc /usr/bin/python3 "$SRC/live_crc.py"
live_wait_line '^READY=1'
ZLIB=$(awk '$6 ~ /\/libz\.so/ { print $6; exit }' /proc/"$LPID"/maps)
[ -n "$ZLIB" ] || fail "python3 has no libz.so mapped" /proc/"$LPID"/maps
readelf -S -W "$ZLIB" | has '\.symtab' && fail "$ZLIB has a .symtab: not a stripped library"
VADDR=0x$(readelf -W --dyn-syms "$ZLIB" | awk '$8 == "crc32" { print $2; exit }')
BASE=0x$(awk -v f="$ZLIB" '$6 == f && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' /proc/"$LPID"/maps)
ADDR=$(printf '%#x' $((BASE + VADDR)))
FILEB=$(live_file_bytes "$ZLIB" "$VADDR" 7)
log "python3 $LPID: $ZLIB (stripped) crc32 at $VADDR -> $ADDR; file bytes $FILEB"
[ "$(live_mem "$ADDR" 7)" = "$FILEB" ] || fail "crc32 in memory differs from the file before any patch"

"$ARGUS" instrument --pid "$LPID" --func libz.so.1:crc32 --as begin --count-only >"$T/i.out" 2>"$T/i.err" ||
	fail "argus instrument --func libz.so.1:crc32 failed" "$T/i.err"
log "$(cat "$T/i.out")"
grep -q "at $ADDR (stripped file: .dynsym)" "$T/i.out" || fail "instrument patched another address, or did not say the file is stripped" "$T/i.out"
now=$(live_mem "$ADDR" 7)
[ "${now:0:2}" = e9 ] || fail "crc32's entry is $now while patched, not a jmp"

live_send "crc 50"
live_wait_line '^CRC n=50 '
grep -q '^CRC n=50 bad=0$' "$T/crc.out" || fail "zlib.crc32 gave wrong results while patched" "$T/crc.out"
"$ARGUS" instrument --pid "$LPID" --list >"$T/list" 2>&1
log "list: $(cat "$T/list")"
hits=$(sed -n 's/.*:crc32 as count hits \([0-9]*\) .*/\1/p' "$T/list")
[ "$hits" = 50 ] || fail "the trampoline counted $hits calls of crc32, expected 50" "$T/list"

"$ARGUS" instrument --pid "$LPID" --func libz:crc32 --remove >"$T/r.out" 2>"$T/r.err" ||
	fail "--remove failed" "$T/r.err"
log "$(cat "$T/r.out")"
[ "$(live_mem "$ADDR" 7)" = "$FILEB" ] || fail "after --remove crc32 is $(live_mem "$ADDR" 7), the file has $FILEB"
live_send "crc 5"
live_wait_line '^CRC n=5 '
grep -q '^CRC n=5 bad=0$' "$T/crc.out" || fail "zlib.crc32 is wrong after --remove" "$T/crc.out"

# -- under fire: patch and remove 8 times while python calls crc32 tens of
# thousands of times a second; every thread is stopped for each change and
# none may be inside the 7 bytes, so no call may go wrong
live_send "crc 20000"
sleep 0.2
for i in 1 2 3 4 5 6 7 8; do
	"$ARGUS" instrument --pid "$LPID" --func libz:crc32 --as begin --count-only >"$T/c.out" 2>"$T/c.err" ||
		fail "patch $i of crc32 under load failed" "$T/c.err"
	sleep 0.05
	"$ARGUS" instrument --pid "$LPID" --func libz:crc32 --remove >"$T/c.out" 2>"$T/c.err" ||
		fail "removal $i of crc32 under load failed" "$T/c.err"
done
live_wait_line '^CRC n=20000 ' 60
grep -q '^CRC n=20000 bad=0$' "$T/crc.out" || fail "crc32 went wrong while patched and restored under load" "$T/crc.out"
[ "$(live_mem "$ADDR" 7)" = "$FILEB" ] || fail "after the cycles crc32 differs from the file"
log "8 patch/remove cycles while crc32 ran hot: 20000 results right, bytes restored"
live_send quit
live_wait_line '^EXIT ok'
live_finish 0
pass "libz.so.1:crc32 (stripped, .dynsym) patched in python3: 50 calls counted, results right, the file's bytes restored, also under load"
