#!/bin/bash
# e2e: a flood (hackbench -g 4 -l 300, or perf bench sched messaging)
# reports lost events, never hides them.  Asserts: `argus record` prints
# its lost count on stderr; `argus dump --stats` prints "# lost events:"
# with a count per CPU and a total; the per-CPU counts add up to the
# total; the total equals what record printed.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

flood_cmd
record flood -- "${FLOOD[@]}"
line=$(grep -E '^argus record: .* lost' "$T/flood.err" | tail -n 1)
[ -n "$line" ] || fail "argus record printed no lost count on stderr" "$T/flood.err"
rec_lost=$(printf '%s\n' "$line" | sed -nE 's/.*[ ,]([0-9]+) lost.*/\1/p')
[ -n "$rec_lost" ] || fail "cannot read the lost count in: $line"
rec_events=$(printf '%s\n' "$line" | sed -nE 's/^argus record: ([0-9]+) events.*/\1/p')

dump_to "$TRACE" "$T/flood.stats" --stats
stats=$(grep '^# lost events:' "$T/flood.stats")
[ -n "$stats" ] || fail "argus dump --stats prints no '# lost events:' line" "$T/flood.stats"
printf '%s\n' "$stats" | has -E 'cpu0=[0-9]+' || fail "no per-CPU lost counts: $stats"
total=$(printf '%s\n' "$stats" | sed -nE 's/.*total=([0-9]+).*/\1/p')
[ -n "$total" ] || fail "no total in: $stats"
sum=$(printf '%s\n' "$stats" | grep -oE 'cpu[0-9]+=[0-9]+' | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
log "flood: ${FLOOD[*]}"
log "record said: $line"
log "dump says:   $(grep '^# ' "$T/flood.stats" | tr '\n' ' ')"
log "lost: record=$rec_lost dump total=$total per-CPU sum=$sum (events recorded: ${rec_events:-?})"
[ "$sum" = "$total" ] || fail "per-CPU lost counts add up to $sum, not the total $total: $stats"
[ "$total" = "$rec_lost" ] || fail "the trace holds $total lost events but argus record reported $rec_lost"
pass "lost events reported consistently: $total (record: $rec_lost)"
