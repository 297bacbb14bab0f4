#!/bin/bash
# e2e: the trace reader, through `argus dump`, rejects damaged files
# cleanly.  From a real recorded trace:
#   - bytes flipped in the middle of a chunk payload -> non-zero exit, one
#     stderr line naming an offset;
#   - the file cut in the middle of a chunk (first, and last) -> non-zero,
#     "truncated" and an offset;
#   - a file of random bytes, an empty file, a bumped format version ->
#     non-zero with one clear line;
# and none of them may crash or hang (exit code < 124).  The intact trace
# must dump cleanly, and the round trip must keep the app's events.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

record rt -- "$APPS/pipe_pingpong" 300 5000
dump_to "$TRACE" "$T/rt.dump"
pid=$(kv PARENT_PID)
grep -qE "^ *pipe_pingpong +[0-9]+/$pid " "$T/rt.dump" || fail "the intact trace has no events of the app (pid $pid)" "$T/rt.dump"

# chunk table: "offset payload_len" per chunk (see trace/trace_format.h)
python3 -c '
import struct, sys
with open(sys.argv[1], "rb") as f:
	data = f.read()
off = 4096
while off + 64 <= len(data):
	magic, ver, flags, seq, plen = struct.unpack_from("<IHHQI", data, off)
	if magic != 0x4b484341:
		off += 4096
		continue
	print(off, plen)
	off += 64 + plen
	off = (off + 4095) // 4096 * 4096
' "$TRACE" >"$T/chunks"
nchunks=$(wc -l <"$T/chunks")
[ "$nchunks" -ge 1 ] || fail "found no chunk (magic ACHK) in $TRACE"
log "$TRACE: $(stat -c %s "$TRACE") bytes, $nchunks chunks: $(head -n 4 "$T/chunks" | tr '\n' ';')"
read -r c0 p0 < <(head -n 1 "$T/chunks")
read -r cl pl < <(tail -n 1 "$T/chunks")

# dump_rejects FILE REGEX WHAT: argus dump FILE must fail cleanly.
dump_rejects() {
	local f=$1 re=$2 what=$3 rc lines
	timeout -k 5 60 "$ARGUS" dump "$f" >"$f.out" 2>"$f.err"
	rc=$?
	lines=$(wc -l <"$f.err")
	log "$what: exit $rc, stderr: $(head -n 2 "$f.err" | tr '\n' ' ')"
	[ $rc -ne 0 ] || fail "$what: argus dump exited 0" "$f.out" 10
	[ $rc -lt 124 ] || fail "$what: argus dump crashed, hung or was killed (exit $rc)" "$f.err"
	[ "$lines" -eq 1 ] || fail "$what: expected one error line on stderr, got $lines" "$f.err"
	grep -qiE -- "$re" "$f.err" || fail "$what: the error does not match /$re/" "$f.err"
}

# 1. flipped bytes in the middle of the first chunk's payload
cp "$TRACE" "$T/flip.argus"
mid=$((c0 + 64 + p0 / 2))
python3 -c '
import sys
with open(sys.argv[1], "r+b") as f:
	f.seek(int(sys.argv[2])); b = f.read(16)
	f.seek(int(sys.argv[2])); f.write(bytes(x ^ 0xff for x in b))
' "$T/flip.argus" "$mid"
cmp -s "$TRACE" "$T/flip.argus" && fail "could not corrupt the copy"
dump_rejects "$T/flip.argus" 'offset[^0-9]*(0x)?[0-9]+' "16 bytes flipped at offset $mid (chunk at $c0)"

# 2. cut in the middle of the first chunk, and of the last chunk
cp "$TRACE" "$T/trunc1.argus"
truncate -s $((c0 + 64 + p0 / 2)) "$T/trunc1.argus"
dump_rejects "$T/trunc1.argus" 'truncated.*offset[^0-9]*(0x)?[0-9]+|offset[^0-9]*(0x)?[0-9]+.*truncated' \
	"cut at $((c0 + 64 + p0 / 2)), mid first chunk"
if [ "$nchunks" -ge 2 ]; then
	cp "$TRACE" "$T/trunc2.argus"
	truncate -s $((cl + 64 + pl / 2)) "$T/trunc2.argus"
	dump_rejects "$T/trunc2.argus" 'truncated.*offset[^0-9]*(0x)?[0-9]+|offset[^0-9]*(0x)?[0-9]+.*truncated' \
		"cut at $((cl + 64 + pl / 2)), mid last chunk"
fi

# 3. random bytes, empty file, another format version
head -c 65536 /dev/urandom >"$T/random.argus"
dump_rejects "$T/random.argus" 'argus dump: .+' "64 KiB of random bytes"
: >"$T/empty.argus"
dump_rejects "$T/empty.argus" 'argus dump: .+' "empty file"
cp "$TRACE" "$T/version.argus"
printf '\x63\x00\x00\x00' | dd of="$T/version.argus" bs=1 seek=8 conv=notrunc status=none
dump_rejects "$T/version.argus" 'version|checksum|crc|corrupt' "format version set to 99"

pass "damaged traces rejected cleanly with offsets; intact trace round-trips"
