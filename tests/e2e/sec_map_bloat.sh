#!/bin/bash
# e2e (security): no process can make the collector's memory or CPU grow
# without bound through its maps.  As nobody (tests/e2e/sec/mapbloat.c,
# the issue's attack scaled down to run in seconds): 12 processes, each
# with 8,000 executable mappings of a file under a ~3,900-character path,
# blocked inside the first, for 4 s.  Asserts: during the attack argusd
# answers `status` within 1 s; afterwards it keeps recording, its RSS grew
# by under 128 MiB, it used under 2 s of CPU, and maps_dropped counted
# what the caps refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
sec_build mapbloat

# a path of ~3,900 characters: 19 directories of 200 'd's
d=$ATT
seg=$(printf 'd%.0s' $(seq 1 200))
for _ in $(seq 1 19); do d=$d/$seg; done
as_nobody mkdir -p "$d" || fail "nobody cannot make the long path"
as_nobody sh -c "printf '\270\043\000\000\000\017\005\303' >'$d/f' && truncate -s 4096 '$d/f'" ||
	fail "nobody cannot write the stub file"
log "file path: ${#d} characters"

# Under ASan every free goes to a quarantine of up to 256 MiB before it is
# reused, which RSS counts as growth though argusd holds none of it: a
# small quarantine keeps the figure argusd's own (no effect in the normal
# build, whose argusd has no ASan runtime)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
sec_start
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$ARGUSD_PID/stat"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$ARGUSD_PID/status"; }
hz=$(getconf CLK_TCK)
status_within_1s
dropped0=$(status_key maps_dropped)
c0=$(cpu_ticks)
r0=$(rss_kb)
pids=()
for i in $(seq 1 12); do
	as_nobody "$PUBDIR/mapbloat" "$d/f" 8000 4 >"$T/bloat.$i.out" 2>&1 &
	pids+=($!)
	E2E_PIDS+=($!)
done
sleep 1.5
for _ in 1 2 3; do
	status_within_1s
	log "during the attack: status within 1 s, RSS $(rss_kb) kB, maps_dropped $(status_key maps_dropped)"
	sleep 0.5
done
for p in "${pids[@]}"; do wait "$p" || fail "a mapbloat process failed" "$T/bloat.1.out"; done
grep -q "MAPPED 8000" "$T/bloat.1.out" || fail "mapbloat did not make its mappings" "$T/bloat.1.out"
still_recording "the map bloat"
c1=$(cpu_ticks)
r1=$(rss_kb)
dropped=$(status_key maps_dropped)
ms=$(( (c1 - c0) * 1000 / hz ))
log "argusd: ${ms} ms CPU, RSS ${r0} -> ${r1} kB, maps_dropped ${dropped0} -> ${dropped}"
[ "$ms" -lt 2000 ] || fail "argusd spent ${ms} ms of CPU on the bloated maps"
[ $((r1 - r0)) -lt 131072 ] || fail "argusd grew by $((r1 - r0)) kB"
[ "$dropped" -gt "$dropped0" ] || fail "maps_dropped did not count what the caps refused" "$STATUS"
pass "12 x 8,000 mappings of a 3,900-character path: capped and counted, argusd answered throughout"
