#!/usr/bin/env bash
# A/B of two argus builds on one workload, in interleaved rounds:
#
#   sudo bench/ab.sh OLD_BUILD NEW_BUILD [ROUNDS] [pipe|messaging|switch]
#
# Each round runs the workload bare, under OLD's `argus record`, under
# NEW's, and bare again; a build's ratio in that round is its time over
# the mean of the round's two bare runs.  Prints every round and each
# build's median ratio with its range, and the median of what each
# build's `argus record` said: collector CPU ns per event and bytes per
# event.  For telling a change of a few percent from this VM's 10-20%
# run-to-run spread: the ratios of one round share its minute of noise.
# Default: 8 rounds of the pinned pipe.  `switch` is bench/overhead.sh's
# switch-heavy load (bench/switch_load.c, calibrated to ~100 K switches/s
# untraced) for ARGUS_BENCH_SWITCH_SECS (20) seconds; its "time" is
# 1e6 / hops per second, so its ratio is bare throughput / traced.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
[ $# -ge 2 ] || { echo "usage: sudo bench/ab.sh OLD_BUILD NEW_BUILD [ROUNDS] [pipe|messaging|switch]" >&2; exit 2; }
old=$1 new=$2 rounds=${3:-8} wl=${4:-pipe}
for b in "$old" "$new"; do
  [ -x "$b/bin/argus" ] || { echo "bench/ab.sh: no $b/bin/argus (build it first)" >&2; exit 2; }
done
case $wl in
  pipe) cmd=(taskset -c 0 perf bench sched pipe -l 100000) ;;
  messaging) cmd=(perf bench sched messaging -g 4 -l 300) ;;
  switch)
    [ -x "$new/bin/switch_load" ] || { echo "bench/ab.sh: no $new/bin/switch_load (build the bench targets)" >&2; exit 2; }
    cmd=("$new/bin/switch_load" --iters "$("$new/bin/switch_load" --calibrate 100000 2>/dev/null)"
         --secs "${ARGUS_BENCH_SWITCH_SECS:-20}") ;;
  *) echo "bench/ab.sh: workload is pipe, messaging or switch, not '$wl'" >&2; exit 2 ;;
esac
bench_init "$new"
total_time() {
  sed -n -e 's/.*Total time: *\([0-9.]*\).*/\1/p' \
         -e 's/^hops_per_s=\([0-9.]*\) .*/\1/p' | tail -1 |
    if [ "$wl" = switch ]; then awk '$1 > 0 {printf "%.6f\n", 1e6 / $1}'; else cat; fi
}
run() { # [BUILD TAG]
  wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true
  if [ $# -eq 0 ]; then "${cmd[@]}" 2>&1 | total_time; return; fi
  "$1/bin/argus" record -o "$tmp/ab.argus" -- "${cmd[@]}" 2>"$tmp/err" | total_time
  # "N events, ... (B bytes/event), L lost, ... collector CPU C s": C*1e9/N ns/event
  sed -n 's/^argus record: \([0-9]*\) events, .* (\([0-9.]*\) bytes\/event), \([0-9]*\) lost.*collector CPU \([0-9.]*\) s.*/\1 \2 \3 \4/p' \
    "$tmp/err" | awk '$1 > 0 {printf "%.1f %s %s\n", $4 * 1e9 / $1, $2, $3}' >>"$tmp/stats.$2"
}

echo "# A/B, $rounds rounds of ${cmd[*]}; command: sudo bench/ab.sh $old $new $rounds $wl"
echo "# round: bare old new bare"
for i in $(seq "$rounds"); do
  line="$(run) $(run "$old" old) $(run "$new" new) $(run)"
  echo "$i: $line"
  echo "$line" >>"$tmp/rounds"
done
summary() { # COLUMN NAME
  awk -v k="$1" '$1 > 0 && $4 > 0 && $k ~ /^[0-9.]+$/ {print $k / (($1 + $4) / 2)}' "$tmp/rounds" |
    median_range | awk -v name="$2" '{printf "%s: median %.3fx (%.3f-%.3f) over %d rounds\n", name, $1, $2, $3, $4}
      END {if (!NR) print name ": no complete round"}'
}
summary 2 "old $old"
summary 3 "new $new"
# the recorder's own figures: median collector CPU ns/event, bytes/event, lost
for tag in old new; do
  [ -s "$tmp/stats.$tag" ] || continue
  for k in 1 2 3; do awk -v k=$k '{print $k}' "$tmp/stats.$tag" | median_range | awk '{printf "%s ", $1}'; done |
    awk -v t="$tag" '{printf "%s argus record: collector CPU %s ns/event, %s bytes/event, %s lost (medians)\n", t, $1, $2, $3}'
done
