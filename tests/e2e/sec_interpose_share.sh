#!/bin/bash
# e2e (security): one user cannot take the interposer from the rest of the
# machine (issue 25, F6; docs/interposer.md "Security model").
# sec/ipshare speaks the registration protocol itself.
#  1. four uids other than root (nobody, 65533, 65532, 65531) each try to
#     hold 64 rings (256: the whole table before the fix): together they
#     get at most 256 - ARGUS_IP_ROOT_RESERVE (32) = 224, the rest refused
#     and counted (interpose_refused_full); root's interposed app
#     (tests/apps/mutex_pipe under LD_PRELOAD) still registers and its
#     records reach the trace;
#  2. nobody floods from 16 rings for 3 s (valid records, varied
#     addresses): argusd takes at most ARGUS_IP_UID_RATE (20000) records a
#     second of it (plus a second's burst), the rest is dropped unread and
#     counted (interpose_over_budget), and `argus status` answers within
#     a second all along.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/sec_lib.sh"
sec_init
sec_build ipshare
LIB=$BUILD/lib/libargus-interpose.so
[ -f "$LIB" ] || fail "no $LIB (build first)"
sec_start --no-watch-interactive
chmod 711 "$T"          # other users reach the run dir by name

# ---- 1: four users fill what they may; root still registers ----
HOLDERS=()
for u in 65534 65533 65532 65531; do
	setpriv --reuid=$u --regid=$u --clear-groups "$PUBDIR/ipshare" hold "$ARGUS_RUN_DIR" 64 \
		>"$T/hold.$u" 2>&1 &
	E2E_PIDS+=("$!")
done
for u in 65534 65533 65532 65531; do
	for _ in $(seq 1 100); do grep -q "^sent" "$T/hold.$u" && break; sleep 0.1; done
	grep -q "^sent 64 " "$T/hold.$u" || fail "uid $u did not send its 64 registrations" "$T/hold.$u"
	HOLDERS+=("$(sed -n 's/^sent 64 pid //p' "$T/hold.$u")")
done
# every registration taken or refused
for _ in $(seq 1 50); do
	status_within_1s
	[ $(( $(status_key interpose_registered) + $(status_key interpose_refused) )) -ge 256 ] && break
	sleep 0.2
done
procs=$(status_key interpose_procs)
full=$(status_key interpose_refused_full)
log "four users' 256 registrations: $procs rings held, $full refused as full"
[ "$procs" -le 224 ] || fail "other users hold $procs rings: no reserve left for root" "$STATUS"
[ "${full:-0}" -ge 32 ] || fail "the refused registrations are not counted as full ($full)" "$STATUS"
reg0=$(status_key interpose_registered)
rec0=$(status_key interpose_records)
LD_PRELOAD=$LIB timeout 30 "$APPS/mutex_pipe" 400 >"$T/mp.out" 2>"$T/mp.err" ||
	fail "root's mutex_pipe under the interposer failed" "$T/mp.err"
sleep 0.5
status_within_1s
# (it registers its forked writer too)
[ "$(status_key interpose_registered)" -gt "$reg0" ] ||
	fail "root's interposed app was not registered while other users held their share" "$STATUS"
[ "$(status_key interpose_refused_full)" = "$full" ] || fail "root's registration was refused as full" "$STATUS"
[ "$(status_key interpose_records)" -gt "$rec0" ] || fail "no record of root's interposed app" "$STATUS"
log "root's interposed app $(kv PID "$T/mp.out") registered, its records taken"
for p in "${HOLDERS[@]}"; do kill "$p"; done
for _ in $(seq 1 50); do
	status_within_1s
	[ "$(status_key interpose_procs)" = 0 ] && break
	sleep 0.2
done
[ "$(status_key interpose_procs)" = 0 ] || fail "the holders' rings were not dropped when they died" "$STATUS"

# ---- 2: nobody's flood is bounded ----
rec0=$(status_key interpose_records)
t0=$(date +%s%N)
as_nobody "$PUBDIR/ipshare" flood "$ARGUS_RUN_DIR" 16 3000 >"$T/flood.out" 2>&1 &
FL=$!
E2E_PIDS+=("$FL")
slow=0
while kill -0 "$FL" 2>/dev/null; do
	status_within_1s
	[ "$STATUS_MS" -gt 300 ] && slow=$((slow + 1))
	sleep 0.3
done
wait "$FL" || fail "the flood failed" "$T/flood.out"
sleep 0.3
status_within_1s
t1=$(date +%s%N)
wrote=$(sed -n 's/^WROTE //p' "$T/flood.out")
took=$(( $(status_key interpose_records) - rec0 ))
over=$(status_key interpose_over_budget)
secs_x10=$(( (t1 - t0) / 100000000 ))
# the budget: 20000/s over the whole window, and one second's burst
max=$(( 20000 * (secs_x10 + 10) / 10 ))
log "nobody's flood: wrote $wrote records in ${secs_x10}00 ms; argusd took $took (at most $max), dropped $over over budget; $slow status answers over 300 ms"
[ "$took" -le "$max" ] || fail "argusd took $took of nobody's records, more than its budget $max" "$STATUS"
[ "${over:-0}" -gt 0 ] || fail "nothing dropped over budget (interpose_over_budget=$over)" "$STATUS"
[ "$wrote" -gt "$max" ] || fail "the flood wrote only $wrote records: it tested nothing" "$T/flood.out"
still_recording "nobody's flood"
pass "four users leave root's reserve; one user's flood is held to its budget and counted"
