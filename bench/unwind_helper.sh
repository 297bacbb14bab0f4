#!/usr/bin/env bash
# What the sandboxed unwind helper (symbols/unwind_helper.h) costs against
# unwinding in argusd's own process, on one workload, in interleaved rounds:
#
#   bench/unwind_helper.sh [ROUNDS] [pipe|messaging|busy] [BUILD]
#
# Each round runs the workload under `argus record --wait-stacks` twice:
# with ARGUS_UNWIND_INPROCESS=1 (libdwfl in the collector, as before) and
# with the helper (the default).  Prints, per round, the collector CPU
# (the helper's included) and the "stacks DWARF-unwound" and memo counts
# of `argus record`'s summary, then the median of helper/in-process CPU.
# First, bench_unwind: one unwind's cost, memo miss and hit, both ways.
#   pipe       taskset -c 0 perf bench sched pipe -l 100000 (memo-heavy:
#              one blocking place, ~90% of the waits from the memo)
#   messaging  perf bench sched messaging -g 4 -l 300 (many threads)
#   busy       a 3 s CPU loop in python3 (the sampler's stacks only)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
rounds=${1:-5} wl=${2:-pipe}
case $wl in
  pipe) cmd=(taskset -c 0 perf bench sched pipe -l 100000) ;;
  messaging) cmd=(perf bench sched messaging -g 4 -l 300) ;;
  busy) cmd=(/usr/bin/python3 -c "import time; t = time.time() + 3
while time.time() < t: sum(range(1000))") ;;
  *) echo "bench/unwind_helper.sh: workload is pipe, messaging or busy, not '$wl'" >&2; exit 2 ;;
esac
bench_init "${3:-}"
[ -x "$argus_bin" ] || { echo "bench/unwind_helper.sh: no $argus_bin (build it first)" >&2; exit 2; }
run() { # INPROCESS(0|1)
  wait_quiet "${ARGUS_BENCH_QUIET_S:-5}" || true
  rm -f "$tmp/u.argus"
  if [ "$1" = 1 ]; then
    ARGUS_UNWIND_INPROCESS=1 "$argus_bin" record --wait-stacks -o "$tmp/u.argus" -- "${cmd[@]}" 2>&1 >/dev/null | record_stacks_summary
  else
    "$argus_bin" record --wait-stacks -o "$tmp/u.argus" -- "${cmd[@]}" 2>&1 >/dev/null | record_stacks_summary
  fi
}
# the cost of one unwind, out of any workload's noise
if [ -x "$build/bin/bench_unwind" ] && [ -x "$build/bin/busy_nofp" ]; then
  "$build/bin/bench_unwind" "$build/bin/busy_nofp" 3000
fi
echo "# unwind helper vs in-process, $rounds rounds of ${cmd[*]}; command: bench/unwind_helper.sh $rounds $wl"
echo "# round: in-process (cpu_s unwound memo) | helper (cpu_s unwound memo)"
for i in $(seq "$rounds"); do
  a=$(run 1) b=$(run 0)
  echo "$i: $a | $b"
  echo "$a $b" >>"$tmp/rounds"
done
# (mawk has no asort: the ratios are sorted by sort -n)
ratios=$(awk '$1 > 0 { printf "%.3f\n", $4 / $1 }' "$tmp/rounds" | sort -n)
n=$(echo "$ratios" | grep -c .)
[ "$n" -gt 0 ] || { echo "bench/unwind_helper.sh: no round measured" >&2; exit 1; }
med=$(echo "$ratios" | awk -v n="$n" '{ r[NR] = $1 } END { print n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2 }')
echo "median collector CPU, helper / in-process: ${med}x (min $(echo "$ratios" | head -1), max $(echo "$ratios" | tail -1), $n rounds)"
awk '{ u1 += $2; u2 += $5; m1 += $3; m2 += $6 }
  END { printf "stacks DWARF-unwound: in-process %d, helper %d; unwinds from the memo: %d, %d (all rounds)\n", u1, u2, m1, m2 }' "$tmp/rounds"
