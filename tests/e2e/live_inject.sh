#!/bin/bash
# e2e: `argus inject` into a process that is already hung (issue 14 §3,
# docs/interposer.md "Live: inject and instrument").
# tests/apps/live_hung: main blocked in poll() (120 s timeout), a worker in
# a raw FUTEX_WAIT, a third thread in pause(); a private collector runs.
# Asserts:
#   - inject exits 0, the library is in the app's maps afterwards;
#   - every thread is blocked again in the syscall it was in (the
#     interrupted poll shows as restart_syscall, its timeout restarted with
#     the time left), the app printed nothing and is alive;
#   - argusd took the ring the constructor registered (`argus status`);
#   - the app then does its work and exits 0 with the right output: an
#     EINTR or a poll timeout would have made it exit 3 or 4;
#   - refusals, one clear line each: injected twice, dead pid, a library
#     not owned by root, one writable by others, a file dlopen rejects
#     (the target's dlerror text), a caller without permission (nobody).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/live_lib.sh"
LIB=$BUILD/lib/libargus-interpose.so
[ -f "$LIB" ] || fail "no $LIB (build first)"

mkdir -p "$T/ring"
start_collector --dir "$T/ring" --size 64M --no-watch-interactive
"$ARGUS" status --raw >"$T/st0" 2>&1 || fail "argus status failed" "$T/st0"
reg0=$(sed -n 's/^interpose_registered=//p' "$T/st0")

live_start hung "$APPS/live_hung" park
live_wait_line '^READY=1'
OUT=$T/hung.out
live_wait_blocked 3
before=$(live_syscalls)
log "hung: pid $LPID, threads in syscalls: $before"
grep -q libargus-interpose /proc/"$LPID"/maps && fail "the library is mapped before the inject"

"$ARGUS" inject --pid "$LPID" >"$T/inject.out" 2>"$T/inject.err" ||
	fail "argus inject --pid $LPID failed" "$T/inject.err"
log "$(cat "$T/inject.out")"
grep -q "$(readlink -f "$LIB")" /proc/"$LPID"/maps || fail "the library is not in the app's maps after inject" /proc/"$LPID"/maps

# hung as before: the same threads, blocked again in the same calls
sleep 0.3
log "after inject: $(live_syscalls)"
live_same_blocked "$before"
[ "$(grep -vc '=' "$T/hung.out")" = 0 ] || fail "the hung app printed something after the inject" "$T/hung.out"
[ -s "$T/hung.err" ] && fail "the app wrote to stderr" "$T/hung.err"

# argusd has its ring (the constructor registered from inside dlopen)
for _ in $(seq 40); do
	"$ARGUS" status --raw >"$T/st1" 2>&1
	[ "$(sed -n 's/^interpose_registered=//p' "$T/st1")" -gt "$reg0" ] && break
	sleep 0.1
done
reg1=$(sed -n 's/^interpose_registered=//p' "$T/st1")
[ "$reg1" -gt "$reg0" ] || fail "argusd took no registration from the injected library ($reg0 -> $reg1)" "$T/st1"
log "argusd: interpose_registered $reg0 -> $reg1, interpose_procs $(sed -n 's/^interpose_procs=//p' "$T/st1")"

# the app goes on exactly as if nothing happened
live_send "work 100"
live_wait_line '^DONE n=100 '
sum=$(sed -n 's/^DONE n=100 sum=//p' "$T/hung.out")
[ "$sum" = 328450 ] || fail "the worker's sum is $sum, expected 328450 (sum of i*i+1, i<100)" "$T/hung.out"

# -- refusals
expect_clean_error 'already loaded' "$ARGUS" inject --pid "$LPID"
live_send quit
live_wait_line '^EXIT ok'
live_finish 0
log "the app restarted its poll and futex wait, worked (sum $sum) and exited 0"

expect_clean_error "no process $LPID" "$ARGUS" inject --pid "$LPID"

live_start victim "$APPS/live_hung"
live_wait_line '^READY=1'
mkdir -m 755 "$T/libs"
cp "$LIB" "$T/libs/user.so"
chown nobody "$T/libs/user.so"
expect_clean_error 'owned by uid 65534, not root' "$ARGUS" inject --pid "$LPID" --lib "$T/libs/user.so"
cp "$LIB" "$T/libs/open.so"
chmod 666 "$T/libs/open.so"
expect_clean_error 'writable by group or others' "$ARGUS" inject --pid "$LPID" --lib "$T/libs/open.so"
echo "not an ELF file" >"$T/libs/junk.so"
expect_clean_error 'returned NULL: .*(invalid ELF header|too short|junk\.so)' "$ARGUS" inject --pid "$LPID" --lib "$T/libs/junk.so"
chmod 755 "$T"
expect_clean_error 'not allowed to trace' setpriv --reuid=65534 --regid=65534 --clear-groups "$ARGUS" inject --pid "$LPID" --lib "$LIB"
grep -q libargus-interpose /proc/"$LPID"/maps && fail "a refused inject left the library mapped"
live_send "work 3"
live_wait_line '^DONE n=3 sum=8$'
live_send quit
live_finish 0
pass "inject into a hung process: library mapped, ring registered, poll/futex/pause restarted, output correct; refusals clear"
