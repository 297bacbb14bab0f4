#!/usr/bin/env bash
# step_bad_input.sh - the step commands refuse bad input with one clear
# line on stderr and a non-zero exit: a dead pid, a thread that is not
# spinning (blocked in a syscall), a bad --until, and step recordings that
# are missing, empty, not recordings, truncated, corrupt, or of another
# version.  A good recording still loads after all that.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/step_lib.sh"
e2e_init "$1"

one_line() {   # the last expect_clean_error printed exactly one line
	local n
	n=$(grep -c . "$(ls -t "$T"/clean_error.*.err | head -n 1)")
	[ "$n" = 1 ] || fail "$n lines on stderr, want one" "$(ls -t "$T"/clean_error.*.err | head -n 1)"
}

# a dead pid: a process that has exited and been reaped
true & dead=$!
wait "$dead"
expect_clean_error "no process $dead" "$ARGUS" flag --pid "$dead"; one_line
expect_clean_error "no process $dead" "$ARGUS" step --pid "$dead"; one_line
expect_clean_error "no thread 1 in process $$" "$ARGUS" step --pid $$ --tid 1; one_line

# not spinning: blocked in a syscall (sleep)
sleep 60 & SL=$!
E2E_PIDS+=("$SL")
sleep 0.2
expect_clean_error "not spinning" "$ARGUS" flag --pid "$SL" --syscall-timeout 500; one_line
not_traced "$SL"
kill -0 "$SL" || fail "sleep died after argus flag"

# a loop too slow for --timeout (700 ms a turn, 1 s of stepping): refused,
# not judged on the one or two turns seen (attached late in a hang on a
# busy machine, such a loop gave a wrong flag)
"$APPS/timed_sleep" 30 700 >"$T/ts.out" 2>&1 &
TS=$!
E2E_PIDS+=("$TS")
sleep 0.3
expect_clean_error "came round no loop 4 times in [0-9]+ instructions \(--timeout 1 s" \
	"$ARGUS" flag --pid "$TS" --timeout 1; one_line
not_traced "$TS"
kill "$TS"

# bad --until
expect_clean_error "memN" "$ARGUS" step --pid "$SL" --until 'mem12(0x10) != 0'
expect_clean_error "operator" "$ARGUS" step --pid "$SL" --until 'rip ~ 5'
expect_clean_error "unknown register" "$ARGUS" step --pid "$SL" --until 'xyz == 1'

# recordings: a good one first
start_app branch_pick b 20
"$ARGUS" step --pid "$APP_PID" --count 200 --record "$T/good.stp" >/dev/null 2>"$T/rec.err" ||
	fail "argus step --record failed" "$T/rec.err"
stop_app
size=$(stat -c %s "$T/good.stp")

: >"$T/empty.stp"
echo "hello, not a recording at all, but long enough for a header to be read from it ......" >"$T/text.stp"
head -c $((size - 100)) "$T/good.stp" >"$T/trunc.stp"
head -c 40 "$T/good.stp" >"$T/short.stp"
cp "$T/good.stp" "$T/corrupt.stp"
flip_byte "$T/corrupt.stp" $((size - 7))
cp "$T/good.stp" "$T/v2.stp"
printf '\x02' | dd of="$T/v2.stp" bs=1 seek=8 conv=notrunc 2>/dev/null
cp "$T/good.stp" "$T/hdr.stp"
flip_byte "$T/hdr.stp" 17
cat "$T/good.stp" - <<<"trailing" >"$T/trail.stp"

G=$T/good.stp
expect_clean_error "missing\.stp: No such file" "$ARGUS" step-diff "$T/missing.stp" "$G"; one_line
expect_clean_error "empty\.stp: truncated: 0 bytes" "$ARGUS" step-diff "$G" "$T/empty.stp"; one_line
expect_clean_error "text\.stp: not a step recording" "$ARGUS" step-diff "$T/text.stp" "$G"; one_line
expect_clean_error "short\.stp: truncated" "$ARGUS" step-diff "$T/short.stp" "$G"; one_line
expect_clean_error "trunc\.stp: truncated: the header says [0-9]+ body bytes, the file has [0-9]+" \
	"$ARGUS" step-diff "$G" "$T/trunc.stp"; one_line
expect_clean_error "corrupt\.stp: body checksum mismatch" "$ARGUS" step-diff "$G" "$T/corrupt.stp"; one_line
expect_clean_error "v2\.stp: step recording version 2 at offset 8" "$ARGUS" step-diff "$G" "$T/v2.stp"; one_line
expect_clean_error "hdr\.stp: header checksum mismatch at offset 60" "$ARGUS" step-diff "$G" "$T/hdr.stp"; one_line
expect_clean_error "trail\.stp: trailing bytes" "$ARGUS" step-diff "$G" "$T/trail.stp"; one_line
expect_clean_error "--normal .*v2\.stp: step recording version 2" "$ARGUS" flag --pid "$SL" --normal "$T/v2.stp"; one_line

"$ARGUS" step-diff "$G" "$G" >"$T/self.txt" 2>&1 || fail "the good recording does not load" "$T/self.txt"
grep -q "no divergence" "$T/self.txt" || fail "a recording diffed with itself diverged" "$T/self.txt"
pass "dead pid, blocked thread, a loop slower than --timeout, bad --until and 9 kinds of bad recording each refused with one line"
