#!/bin/bash
# e2e (security): a hostile process against argusd's interposer socket
# (docs/interposer.md, "Security model").  tests/apps/interpose_forge runs
# as nobody and speaks the registration protocol itself: four
# registrations argusd must refuse (unsealed memfd, wrong size, no fd, a
# pipe), then a good one whose ring it fills with a few true records and
# many forged ones (bad size, type, reserved fields, time, a tid or a
# holder of another process), and finally moves the ring's head
# backwards.  The forger prints how many of each it wrote.  Asserts:
#   - every refusal and every forged record is counted, by reason, exactly;
#   - the true records are taken, and no record in the trace speaks for
#     another process's tid;
#   - argusd keeps answering and recording;
#   - nobody can reach interpose.sock but not drive argusd.sock.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/sec_lib.sh"
sec_init
sec_start --no-watch-interactive
# nobody reaches the run dir by name (argusd made it 0711); our temp dir
# must let it through too
chmod 711 "$T"
[ "$(stat -c %a "$ARGUS_RUN_DIR")" = 711 ] || fail "argusd did not make its run dir 0711"
cp "$APPS/interpose_forge" "$PUBDIR/" && chmod 755 "$PUBDIR/interpose_forge"

sleep 60 &
OTHER=$!
E2E_PIDS+=("$OTHER")

as_nobody env ARGUS_RUN_DIR="$ARGUS_RUN_DIR" timeout 20 "$PUBDIR/interpose_forge" "$OTHER" \
	>"$T/forge.out" 2>"$T/forge.err" || fail "the forger failed" "$T/forge.err"
OUT=$T/forge.out
export FPID=$(kv PID) OTHER
log "forger $FPID (nobody): $(grep -v '^PID' "$OUT" | tr '\n' ' ')"
sleep 0.3
still_recording "the forged registrations and records"
fails=0
want() {
	local key=$1 exp=$2 got
	got=$(status_key "$key")
	if [ "$got" = "$exp" ]; then log "ok: $key=$got"; else
		printf '[%s] FAIL: %s=%s, expected %s\n' "$E2E_NAME" "$key" "$got" "$exp" >&2; fails=1; fi
}
want interpose_refused "$(kv REFUSED)"
want interpose_registered 1
want interpose_records "$(kv VALID)"
want interpose_invalid "$(kv FORGED)"
for r in bad_size bad_type bad_field bad_time bad_tid bad_holder; do
	want "interpose_invalid.$r" "$(kv "BAD_$r")"
done
[ $fails = 0 ] || fail "argusd's interposer counts do not match what the forger wrote" "$STATUS" 60

# the control socket stays root's
as_nobody env ARGUS_RUN_DIR="$ARGUS_RUN_DIR" "$ARGUS" status >"$T/nobody.out" 2>&1 &&
	fail "nobody could drive argusd.sock" "$T/nobody.out"
grep -qi "permission denied\|root" "$T/nobody.out" || fail "nobody's argus status did not fail on permissions" "$T/nobody.out"

"$ARGUS" save -o "$T/s.argus" >"$T/save.out" 2>&1 || fail "argus save failed" "$T/save.out"
dump_to "$T/s.argus" "$T/s.dump"
check_dump "$T/s.dump" '
F, O = int(ENV["FPID"]), int(ENV["OTHER"])
m = [e for e in ev if e["type"].startswith("mutex_")]
mine = [e for e in m if e["pid"] == F and e["tid"] == F]
lies = [e for e in m if e["tid"] == O or e["pid"] == O or e["tid"] == 1 or e["pid"] != F]
bad = 0
if len(mine) != 3:
	say("FAIL: %d mutex records of the forger in the trace, expected its 3 true ones" % len(mine)); show(m); bad = 1
else:
	say("ok: the forger\x27s 3 true records, e.g. " + mine[0]["line"])
if lies:
	say("FAIL: records speaking for another process:"); show(lies); bad = 1
sys.exit(bad)
' || fail "the trace holds the wrong interposer records (see above)"
pass "forged interposer records and registrations: all rejected and counted by reason, the true ones kept, argusd unharmed"
