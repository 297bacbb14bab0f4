#!/bin/bash
# e2e (security, issue 25 F4): an interposer ring belongs to the image and
# credentials that registered it.  As nobody (tests/e2e/sec/ring_exec.c):
# register a ring, write 10 true records, then exec a setuid-root copy of
# sleep (same pid, euid 0) while a forked child keeps the ring and writes
# 200 records in the setuid program's name.  Asserts:
#   - the 10 records of the registering image are taken (the legitimate
#     use works);
#   - the exec is real (the pid runs as euid 0);
#   - none of the 200 is taken: interpose_records stays, and
#     interpose_invalid.after_exec counts exactly 200; the trace has no
#     work_begin of item 0xdead....;
#   - argusd keeps answering and recording.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/sec_lib.sh"
sec_init
sec_build ring_exec
sec_start --no-watch-interactive
chmod 711 "$T"          # nobody reaches the run dir (0711) by name

SUID=$PUBDIR/suid_sleep
cp "$(command -v sleep)" "$SUID"
chown root:root "$SUID"
chmod 4755 "$SUID"
GO=$ATT/go

status_within_1s
rec0=$(status_key interpose_records)
as_nobody "$PUBDIR/ring_exec" "$ARGUS_RUN_DIR" "$SUID" "$GO" >"$T/att.out" 2>"$T/att.err" &
E2E_PIDS+=("$!")
for _ in $(seq 100); do grep -q '^PID ' "$T/att.out" && break; sleep 0.05; done
P=$(sed -n 's/^PID //p' "$T/att.out")
[ -n "$P" ] || fail "the attack program did not start" "$T/att.err"
# its 10 true records are taken
for _ in $(seq 40); do
	status_within_1s
	[ "$(status_key interpose_records)" -ge $((rec0 + 10)) ] && break
	sleep 0.1
done
rec1=$(status_key interpose_records)
[ "$rec1" = $((rec0 + 10)) ] || fail "the registering image's 10 records were not taken ($rec0 -> $rec1)" "$STATUS"
ae0=$(status_key interpose_invalid.after_exec)
log "registered: pid $P, records $rec0 -> $rec1"

touch "$GO"
euid=
for _ in $(seq 100); do
	read -r _ ruid euid _ < <(grep '^Uid:' /proc/"$P"/status 2>/dev/null)
	[ "$euid" = 0 ] && break
	sleep 0.05
done
[ "$euid" = 0 ] && [ "$ruid" = 65534 ] ||
	fail "the exec did not give euid 0 (uid $ruid euid $euid): the test does not test the case"
log "pid $P now runs $(cat /proc/"$P"/comm) as uid $ruid euid $euid"
for _ in $(seq 100); do grep -q '^WROTE 200' "$T/att.out" && break; sleep 0.05; done
grep -q '^WROTE 200' "$T/att.out" || fail "the child did not write its records" "$T/att.err"
sleep 0.5
status_within_1s
rec2=$(status_key interpose_records)
ae=$(status_key interpose_invalid.after_exec)
log "after the exec: records $rec1 -> $rec2, interpose_invalid.after_exec ${ae0:-none} -> ${ae:-none}"
[ "$rec2" = "$rec1" ] || fail "records written after the exec were taken ($rec1 -> $rec2)" "$STATUS"
[ -n "$ae" ] && [ "$ae" = $((ae0 + 200)) ] ||
	fail "interpose_invalid.after_exec is '${ae}', expected $((ae0 + 200))" "$STATUS"
still_recording "the ring's exec"

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump"
P=$P check_dump "$T/s.dump" '
P = int(ENV["P"])
w = [e for e in ev if e["type"] == "work_begin" and e["pid"] == P]
late = [e for e in w if e["item"] >= 0xdead0000]
bad = 0
if len(w) != 10:
	say("FAIL: %d work_begin of pid %d, expected the 10 true ones" % (len(w), P)); show(w); bad = 1
if late:
	say("FAIL: records written after the exec are in the trace:"); show(late); bad = 1
sys.exit(bad)
' || fail "the trace holds records written for the setuid image (see above)"
pass "a ring outlives its image no more: after a setuid exec its 200 records are refused and counted (after_exec), the 10 before are kept"
