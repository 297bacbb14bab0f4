#!/bin/bash
# e2e: a wake-up from inside an x86 APIC system interrupt names its vector.
# perf record with a one-page ring wakes its reader from the perf sampling
# interrupt through irq_work, which on x86 runs in the IRQ_WORK_VECTOR
# system interrupt (0xf6; from the local timer, 0xec, where the CPU has no
# self-IPI): neither goes through irq_handler_entry.  Asserts
#   - wakings of perf with ctx=hardirq and vec=apic:0xf6 or apic:0xec;
#   - the graph files them as hard-irq wake-ups, not as edges: its
#     "hardirq" filter count is at least their number.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
command -v perf >/dev/null || fail "perf is missing (scripts/install-deps.sh installs linux-perf)"

record apic -- perf record -q -o "$T/perf.data" --mmap-pages 1 -F 2000 -e cpu-clock -- \
	sh -c 'echo PERF_PID=$PPID; i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done'
dump_to "$TRACE" "$T/apic.dump"
export P=$(kv PERF_PID)
log "perf pid $P"

n=$(check_dump "$T/apic.dump" '
P = int(ENV["P"])
w = [e for e in ev if e["type"] == "waking" and e.get("target_pid", -1) == P]
apic = [e for e in w if re.match(r"^apic:0x(f6|ec)$", str(e.get("vec", "")))]
if not apic:
	say("FAIL: no waking of perf (%d) inside an APIC irq_work/local-timer interrupt; its wakings:" % P)
	show(w[:12])
	sys.exit(1)
bad = [e for e in apic if e["ctx"] != "hardirq"]
if bad:
	say("FAIL: APIC-vector wakings outside hard-irq context:"); show(bad); sys.exit(1)
say("ok: %d of %d wakings of perf came from an APIC system interrupt, e.g.\n    %s" % (len(apic), len(w), apic[0]["line"]))
print(len(apic))
') || fail "APIC-vector wake-ups are missing or wrong (see above)"

"$ARGUS" graph "$TRACE" --stats >"$T/stats.out" 2>"$T/stats.err" || fail "argus graph --stats failed" "$T/stats.err"
hard=$(sed -n 's/^  hardirq *\([0-9]*\).*/\1/p' "$T/stats.out")
log "graph: ${hard:-0} hard-irq wake-ups filtered; $n from APIC vectors"
[ "${hard:-0}" -ge "$n" ] || fail "the graph filtered ${hard:-0} hard-irq wake-ups, fewer than the $n APIC ones" "$T/stats.out"
pass "wake-ups from APIC system interrupts name their vector and are filtered as hard-irq"
