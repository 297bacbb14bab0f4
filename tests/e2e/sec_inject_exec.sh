#!/bin/bash
# e2e (security, issue 25 F2): root's `argus inject` must never write the
# state it saved from one image into another.  argus traces as root, so a
# setuid program the target execs meanwhile runs with root's euid; writing
# the old image's registers back into it hands the user who prepared the
# old image a root process's registers (the repro: su at 0x41410005).
# As nobody (tests/e2e/sec/exec_during_call.c), a setuid-root copy of
# sleep as the program execed ($PUBDIR/suid_sleep, run as "suid_sleep 12"):
#   thread    the main thread parked at 0x41410000 with chosen registers;
#             a second thread holds the loader's write lock until root's
#             dlopen (on the main thread) has mapped the interposer and
#             waits for that lock, then execs suid_sleep, killing the main
#             thread mid-call.  Asserts: inject exits non-zero at once with
#             the one-line "execed ... nothing was restored" error; the
#             process really is euid 0 afterwards (the case is real); it
#             sleeps its 12 s and exits 0 (no SIGSEGV at the attacker's
#             address, none in dmesg);
#   fakelibc  a user's "libc.so.6" (sec/fakelibc_exec.c, its dlopen execs
#             suid_sleep) mapped below the real libc: inject refuses to
#             call code from a user's file, the process never execs.
#   sleepexec root's `argus step` over a process that execs suid_sleep
#             a few instructions after a sleep: stops at the exec
#             ("stopped: exec", one-line error, exit non-zero), nothing of
#             the setuid program stepped, and it exits 0.
# Then the legitimate use: inject into a nobody `sleep` still works.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
sec_build exec_during_call
LIB=$BUILD/lib/libargus-interpose.so
[ -f "$LIB" ] || fail "no $LIB (build first)"

SUID=$PUBDIR/suid_sleep
cp "$(command -v sleep)" "$SUID"
chown root:root "$SUID"
chmod 4755 "$SUID"

# no segfault of the setuid program in the kernel log (when we can read it)
dmesg_clean() {
	if dmesg >/dev/null 2>&1; then
		dmesg | grep -E "suid_sleep\[$1\].*segfault" >"$T/dmesg.$1" &&
			fail "the kernel logged a segfault of the setuid program" "$T/dmesg.$1"
		log "dmesg: no segfault of suid_sleep[$1]"
	fi
}

# -- thread: an exec during the call
as_nobody "$PUBDIR/exec_during_call" thread "$SUID" >"$T/thread.out" 2>&1 &
E2E_PIDS+=("$!")
for _ in $(seq 100); do grep -q '^PID ' "$T/thread.out" && break; sleep 0.05; done
P=$(sed -n 's/^PID //p' "$T/thread.out")
[ -n "$P" ] || fail "the attack program did not start" "$T/thread.out"
sleep 0.3
t0=$(date +%s%N)
timeout 60 "$ARGUS" inject --pid "$P" --lib "$LIB" >"$T/inject.out" 2>"$T/inject.err" &
IPID=$!
# the exec is real and privileged: euid 0 while argus still traces it
euid=
for _ in $(seq 200); do
	read -r _ ruid euid _ < <(grep '^Uid:' /proc/"$P"/status 2>/dev/null)
	[ "$euid" = 0 ] && break
	sleep 0.05
done
[ "$euid" = 0 ] && [ "$ruid" = 65534 ] ||
	fail "the execed program is not setuid root (uid $ruid euid $euid): the test does not test the case"
log "process $P runs suid_sleep as uid $ruid euid $euid"
wait "$IPID"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
log "inject: exit $rc after $ms ms: $(cat "$T/inject.err")"
for _ in $(seq 300); do grep -qE '^(EXIT|SIGNAL) ' "$T/thread.out" && break; sleep 0.1; done
grep -q '^EXIT 0$' "$T/thread.out" ||
	fail "the setuid program did not exit 0 (a register write-back crashed it?)" "$T/thread.out"
[ "$rc" != 0 ] || fail "inject succeeded although the target execed during the call" "$T/inject.out"
[ "$rc" != 124 ] || fail "inject hung" "$T/inject.err"
grep -qE "execed suid_sleep during the call; nothing was restored" "$T/inject.err" ||
	fail "inject did not say the target execed (and that nothing was restored)" "$T/inject.err"
[ "$(wc -l <"$T/inject.err")" = 1 ] || fail "the error is not one line" "$T/inject.err"
[ "$ms" -lt 5000 ] || fail "inject took $ms ms: it did not see the exec, it timed out" "$T/inject.err"
dmesg_clean "$P"
log "thread: the setuid program ran its 12 s untouched and exited 0"

# -- fakelibc: a user's libc.so.6 first in the maps
as_nobody mkdir "$ATT/fake"
cc -shared -fPIC -O1 -nostdlib -fno-stack-protector -DSUID="\"$SUID\"" \
	-o "$T/libc.so.6" "$(dirname "$0")/sec/fakelibc_exec.c" 2>"$T/cc.fake.err" ||
	fail "cannot build the fake libc" "$T/cc.fake.err"
cp "$T/libc.so.6" "$ATT/fake/libc.so.6"
chown -R 65534:65534 "$ATT/fake"
as_nobody "$PUBDIR/exec_during_call" fakelibc "$ATT/fake" >"$T/fake.out" 2>&1 &
E2E_PIDS+=("$!")
for _ in $(seq 100); do grep -q '^PID ' "$T/fake.out" && break; sleep 0.05; done
P=$(sed -n 's/^PID //p' "$T/fake.out")
[ -n "$P" ] || fail "the fakelibc attack program did not start" "$T/fake.out"
sleep 0.3
grep -q "$ATT/fake/libc.so.6" /proc/"$P"/maps || fail "the fake libc is not mapped" /proc/"$P"/maps
expect_clean_error "owned by uid 65534 .*not root-only" "$ARGUS" inject --pid "$P" --lib "$LIB"
sleep 0.3
[ "$(cat /proc/"$P"/comm)" = exec_during_cal ] || fail "the process execed ($(cat /proc/"$P"/comm))"
grep -q '^Uid:.65534.65534' /proc/"$P"/status || fail "the process changed credentials" /proc/"$P"/status
grep -q libargus-interpose /proc/"$P"/maps && fail "the library was loaded through the fake libc"
kill "$P"
for _ in $(seq 50); do grep -qE '^(EXIT|SIGNAL) ' "$T/fake.out" && break; sleep 0.1; done
grep -q '^SIGNAL 15$' "$T/fake.out" || fail "the parked process did not end by our SIGTERM" "$T/fake.out"
dmesg_clean "$P"
log "fakelibc: refused, the process never execed"

# -- sleepexec: argus step across an exec
as_nobody "$PUBDIR/exec_during_call" sleepexec "$SUID" >"$T/step.out" 2>&1 &
E2E_PIDS+=("$!")
for _ in $(seq 100); do grep -q '^PID ' "$T/step.out" && break; sleep 0.05; done
P=$(sed -n 's/^PID //p' "$T/step.out")
[ -n "$P" ] || fail "the sleepexec program did not start" "$T/step.out"
sleep 0.3
timeout 60 "$ARGUS" step --pid "$P" --count 3000 --syscall-timeout 5000 >"$T/stepped.out" 2>"$T/stepped.err"
rc=$?
log "step: exit $rc: $(tail -n 1 "$T/stepped.out") / $(cat "$T/stepped.err")"
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "argus step exited $rc across the exec" "$T/stepped.out"
grep -q 'stopped: exec$' "$T/stepped.out" || fail "argus step did not stop at the exec" "$T/stepped.out"
grep -q 'execed a new program after [0-9]* instructions: detached' "$T/stepped.err" ||
	fail "argus step did not say the thread execed" "$T/stepped.err"
for _ in $(seq 100); do grep -qE '^(EXIT|SIGNAL) ' "$T/step.out" && break; sleep 0.1; done
grep -q '^EXIT 0$' "$T/step.out" || fail "the setuid program did not exit 0 after the step" "$T/step.out"
log "sleepexec: step stopped at the exec, the setuid program ran on"

# -- the legitimate use: a user's plain process
# setpriv itself in the background (as_nobody is a function: its $! would
# be a root subshell), so $! is nobody's sleep
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 60 &
P=$!
E2E_PIDS+=("$P")
sleep 0.3
grep -q '^Uid:.65534.65534' /proc/"$P"/status || fail "process $P is not nobody's" /proc/"$P"/status
timeout 60 "$ARGUS" inject --pid "$P" --lib "$LIB" >"$T/legit.out" 2>"$T/legit.err" ||
	fail "inject into nobody's sleep failed" "$T/legit.err"
grep -q libargus-interpose /proc/"$P"/maps || fail "the library is not in sleep's maps"
kill -0 "$P" || fail "sleep died after the inject"
kill "$P"
pass "an exec during inject's call: refused with nothing restored, the setuid program untouched; a user's libc.so.6 is not called; step stops at an exec; plain inject works"
