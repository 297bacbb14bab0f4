#!/usr/bin/env bash
# A/B of two argus builds on one workload, in interleaved rounds:
#
#   sudo bench/ab.sh OLD_BUILD NEW_BUILD [ROUNDS] [pipe|messaging]
#
# Each round runs the workload bare, under OLD's `argus record`, under
# NEW's, and bare again; a build's ratio in that round is its time over
# the mean of the round's two bare runs.  Prints every round and each
# build's median ratio with its range.  For telling a change of a few
# percent from this VM's 10-20% run-to-run spread: the ratios of one round
# share its minute of noise.  Default: 8 rounds of the pinned pipe.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
[ $# -ge 2 ] || { echo "usage: sudo bench/ab.sh OLD_BUILD NEW_BUILD [ROUNDS] [pipe|messaging]" >&2; exit 2; }
old=$1 new=$2 rounds=${3:-8} wl=${4:-pipe}
for b in "$old" "$new"; do
  [ -x "$b/bin/argus" ] || { echo "bench/ab.sh: no $b/bin/argus (build it first)" >&2; exit 2; }
done
case $wl in
  pipe) cmd=(taskset -c 0 perf bench sched pipe -l 100000) ;;
  messaging) cmd=(perf bench sched messaging -g 4 -l 300) ;;
  *) echo "bench/ab.sh: workload is pipe or messaging, not '$wl'" >&2; exit 2 ;;
esac
bench_init "$new"
total_time() { sed -n 's/.*Total time: *\([0-9.]*\).*/\1/p' | tail -1; }
run() { # [BUILD]
  wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true
  if [ $# -eq 0 ]; then "${cmd[@]}" 2>&1 | total_time
  else "$1/bin/argus" record -o "$tmp/ab.argus" -- "${cmd[@]}" 2>/dev/null | total_time; fi
}

echo "# A/B, $rounds rounds of ${cmd[*]}; command: sudo bench/ab.sh $old $new $rounds $wl"
echo "# round: bare old new bare"
for i in $(seq "$rounds"); do
  line="$(run) $(run "$old") $(run "$new") $(run)"
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
