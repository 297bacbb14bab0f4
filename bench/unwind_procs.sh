#!/usr/bin/env bash
# What a recorded stack costs the collector as more processes block at
# once, in interleaved rounds:
#
#   bench/unwind_procs.sh [ROUNDS] [BUILD]
#
# Each round records, under `argus record --wait-stacks`, FEW and then MANY
# python3 processes (ARGUS_BENCH_PROCS, default "4 24"), each sleeping
# 5 ms at a time for 4 s: every sleep is a blocking switch whose user
# stack (python3 has no frame pointers) is unwound from DWARF, or answered
# from the memo when that process's stack was seen before.  Each process
# has its own maps layout (ASLR), so each needs its own libdwfl session in
# the unwinder: the unwinder keeps a bounded number of them, and when more
# processes block in turn than it keeps, it rebuilds one per stack.
# Prints, per round, the collector CPU (the helper's included) per stack
# recorded (unwound + from the memo) for FEW and MANY, and the median of
# MANY/FEW over the rounds: 1.0x is a cost per stack that does not grow
# with the number of processes.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
rounds=${1:-3}
bench_init "${2:-}"
[ -x "$argus_bin" ] || { echo "bench/unwind_procs.sh: no $argus_bin (build it first)" >&2; exit 2; }
read -r few many <<<"${ARGUS_BENCH_PROCS:-4 24}"
[[ $few =~ ^[0-9]+$ && $many =~ ^[0-9]+$ && $few -gt 0 && $many -gt $few ]] ||
  { echo "bench/unwind_procs.sh: ARGUS_BENCH_PROCS is 'FEW MANY', FEW < MANY, not '${ARGUS_BENCH_PROCS:-}'" >&2; exit 2; }
sleeper='import time
t = time.monotonic() + 4
while time.monotonic() < t: time.sleep(0.005)'
run() { # NPROCS -> "cpu_s unwound memo"
  wait_quiet "${ARGUS_BENCH_QUIET_S:-5}" || true
  rm -f "$tmp/u.argus"
  "$argus_bin" record --wait-stacks -o "$tmp/u.argus" -- bash -c \
    'for i in $(seq "$1"); do /usr/bin/python3 -c "$2" & done; wait' _ "$1" "$sleeper" \
    2>&1 >/dev/null | record_stacks_summary
}
per_stack() { awk '{ n = $2 + $3; if (n > 0) printf "%.1f", $1 * 1e6 / n; else print "n/a" }'; }
echo "# collector CPU per recorded stack, $few vs $many sleeping python3 processes, $rounds rounds"
echo "# command: bench/unwind_procs.sh $rounds   (ARGUS_BENCH_PROCS=\"$few $many\")"
echo "# round: $few procs (cpu_s unwound memo -> us/stack) | $many procs (same) | ratio"
for i in $(seq "$rounds"); do
  a=$(run "$few") b=$(run "$many")
  [ -n "$a" ] && [ -n "$b" ] || { echo "$i: no summary from argus record" >&2; continue; }
  pa=$(echo "$a" | per_stack) pb=$(echo "$b" | per_stack)
  echo "$i: $a -> $pa | $b -> $pb | $(ratio "$pb" "$pa")"
  echo "$pa $pb" >>"$tmp/rounds"
done
[ -s "$tmp/rounds" ] || { echo "bench/unwind_procs.sh: no round measured" >&2; exit 1; }
r=$(awk '$1 > 0 { printf "%.3f\n", $2 / $1 }' "$tmp/rounds" | median_range)
echo "median CPU per stack, $many / $few processes: ${r%% *}x (min, max, rounds: ${r#* })"
echo "median us/stack: $few procs $(cut -d' ' -f1 "$tmp/rounds" | median), $many procs $(cut -d' ' -f2 "$tmp/rounds" | median)"
