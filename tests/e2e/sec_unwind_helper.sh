#!/bin/bash
# e2e (security): the DWARF unwinder runs in a helper process as nobody
# (symbols/unwind_helper.h), so a user who can make it die or hang cannot
# stop the collector, and the helper comes back.  As nobody, against a
# private collector, with tests/apps/busy_nofp (no frame pointers: its
# callers need DWARF) as the workload:
#   1. the helper is running, as uid 65534, under seccomp, and unwinds;
#   2. nobody kills it with SIGSEGV: argusd answers `status` within 1 s
#      and keeps recording; it counts a restart, a new helper (another
#      pid) runs, and a new process's stacks are DWARF-unwound again;
#   3. nobody stops it (SIGSTOP, a hang): the same, and status still
#      answers within 1 s while the stopped helper holds a request;
#   4. the saved ring has none of the helpers' own activity (syscalls,
#      samples, timers: the collector's own work is not traced,
#      like argusd's); their scheduler records stay, as argusd's do (a
#      switch out of a helper is the next task's switch-in), and so do
#      interrupts that landed on them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
cp "$APPS/busy_nofp" "$PUBDIR/busy_nofp" && chmod 755 "$PUBDIR/busy_nofp" ||
	fail "cannot copy busy_nofp to $PUBDIR"

sec_start
# busy_nofp SECONDS as nobody, reaped by pid
busy() {
	as_nobody "$PUBDIR/busy_nofp" "$1" >/dev/null 2>&1 &
	local pid=$!
	wait "$pid" || fail "busy_nofp $1 as nobody failed"
}

busy 1.5
status_within_1s
HP=$(status_key unwind_helper_pid)
U0=$(status_key unwound)
R0=$(status_key unwind_helper_restarts)
[ -n "$HP" ] && [ "$HP" -gt 0 ] || fail "no unwind helper in argus status" "$STATUS"
[ "$U0" -gt 0 ] || fail "busy_nofp's stacks were not DWARF-unwound through the helper" "$STATUS"
[ "$R0" = 0 ] || fail "the helper restarted $R0 times on an ordinary workload" "$STATUS"
[ "$(awk '/^Uid:/ { print $2 }' "/proc/$HP/status")" = 65534 ] ||
	fail "the helper (pid $HP) does not run as uid 65534" "/proc/$HP/status"
[ "$(awk '/^Seccomp:/ { print $2 }' "/proc/$HP/status")" = 2 ] ||
	fail "the helper (pid $HP) has no seccomp filter" "/proc/$HP/status"
log "helper pid $HP, uid 65534, seccomp on; $U0 stacks DWARF-unwound"
HPS=$HP

n=0
for sig in SEGV STOP; do
	n=$((n + 1))
	as_nobody kill -"$sig" "$HP" || fail "nobody could not send SIG$sig to the helper $HP"
	# a workload in flight meets the dead or stopped helper
	as_nobody "$PUBDIR/busy_nofp" 2 >/dev/null 2>&1 &
	bp=$!
	sleep 0.3
	still_recording "SIG$sig to the unwind helper"
	wait "$bp" || fail "busy_nofp as nobody failed"
	status_within_1s
	U1=$(status_key unwound)
	# a new process: a new maps layout, which the memo cannot answer
	busy 1.5
	status_within_1s
	HP2=$(status_key unwind_helper_pid)
	R=$(status_key unwind_helper_restarts)
	U2=$(status_key unwound)
	log "after SIG$sig: restarts $R, helper pid $HP -> $HP2, unwound $U1 -> $U2"
	[ "$R" -ge "$n" ] || fail "argusd did not count the helper's death by SIG$sig (restarts $R)" "$STATUS"
	[ -n "$HP2" ] && [ "$HP2" -gt 0 ] && [ "$HP2" != "$HP" ] ||
		fail "no new helper after SIG$sig (pid $HP -> $HP2)" "$STATUS"
	[ "$U2" -gt "$U1" ] || fail "no stack was DWARF-unwound after the restart ($U1 -> $U2)" "$STATUS"
	[ ! -d "/proc/$HP" ] || [ "$(awk '/^State:/ { print $2 }' "/proc/$HP/status" 2>/dev/null)" = Z ] ||
		fail "the old helper $HP still runs" "/proc/$HP/status"
	HP=$HP2
	HPS="$HPS $HP"
done

"$ARGUS" save -o "$T/all.argus" >/dev/null 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
dump_to "$T/all.argus" "$T/all.dump"
export HPS
check_dump "$T/all.dump" '
hp = {int(p) for p in ENV["HPS"].split()}
sched = {"switch", "waking", "wakeup_new", "fork", "exec", "exit", "free", "rename"}
e = [x for x in ev if x["pid"] in hp and (x["type"] == "sample" or (x["ctx"] == "task" and x["type"] not in sched))]
say("%d events, %d of the helpers (pids %s)" % (len(ev), len(e), ENV["HPS"]))
if e:
	say("FAIL: the unwind helpers were traced:"); show(e[:10]); sys.exit(1)
' || fail "the unwind helpers' own activity is in the trace"
pass "the unwind helper killed or stopped by nobody: argusd answers, records, restarts it (counted) and unwinds again"
