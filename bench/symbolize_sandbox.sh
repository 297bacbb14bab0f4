#!/usr/bin/env bash
# What symbolizing in the sandboxed helper costs root's CLI (symbols/
# symbolize.h, sandbox mode) against parsing in its own process, on one
# recording, in interleaved rounds:
#
#   bench/symbolize_sandbox.sh [ROUNDS] [BUILD]
#
# Records `perf bench sched messaging -g 2 -l 100` under `argus record
# --wait-stacks` once, then per round times `argus dump TRACE --stacks`
# (wall clock) with the helper (the CLI's default) and with
# ARGUS_SYMBOLIZE_INPROCESS=1, and checks the two dumps are identical.
# Prints the medians and the median of the per-round ratios.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
rounds=${1:-5}
bench_init "${2:-}"
[ -x "$argus_bin" ] || { echo "bench/symbolize_sandbox.sh: no $argus_bin (build it first)" >&2; exit 2; }
"$argus_bin" record --wait-stacks -o "$tmp/t.argus" -- perf bench sched messaging -g 2 -l 100 \
  >/dev/null 2>"$tmp/rec.err" || { cat "$tmp/rec.err" >&2; exit 1; }
echo "trace: $(tail -n 1 "$tmp/rec.err")"
wall() {        # wall INPROC OUT: seconds of one dump
  local t0 t1
  t0=$(date +%s.%N)
  ARGUS_SYMBOLIZE_INPROCESS=$1 "$argus_bin" dump "$tmp/t.argus" --stacks >"$2" 2>/dev/null || return 1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true
: >"$tmp/box" ; : >"$tmp/local" ; : >"$tmp/ratio"
for r in $(seq "$rounds"); do
  b=$(wall 0 "$tmp/box.dump") || { echo "the sandboxed dump failed" >&2; exit 1; }
  l=$(wall 1 "$tmp/local.dump") || { echo "the in-process dump failed" >&2; exit 1; }
  cmp -s "$tmp/box.dump" "$tmp/local.dump" || { echo "round $r: the two dumps differ" >&2; exit 1; }
  echo "$b" >>"$tmp/box"; echo "$l" >>"$tmp/local"
  awk -v a="$b" -v b="$l" 'BEGIN { printf "%.3f\n", a / b }' >>"$tmp/ratio"
  echo "round $r: sandboxed $b s, in process $l s ($(wc -l <"$tmp/box.dump") lines, identical)"
done
echo "median: sandboxed $(median <"$tmp/box") s, in process $(median <"$tmp/local") s;" \
     "sandboxed/in-process per round: $(median_range <"$tmp/ratio" | awk '{ printf "%s (%s-%s, %d rounds)", $1, $2, $3, $4 }')"
