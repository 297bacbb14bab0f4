#!/usr/bin/env bash
# Collector throughput: the highest event rate recorded without loss on
# this machine (2 vCPUs), side by side with perf record at the same rates.
#
#   sudo bench/throughput.sh [BUILD_DIR] [SECONDS] [RATES...]
#
# The source is bench/event_flood.c: 2 threads making a paced number of
# write(2) calls per second to /dev/null, one recorded event each (the
# call's sys_exit; argus records no entry for write by default).  The
# tracer and the source share the two CPUs, as they would in real use, so
# at high rates the source cannot reach the offered rate: the "achieved"
# column is what it really made, and "events/s" what the tracer kept.
# Peer: perf record -a on raw_syscalls:sys_exit filtered in the kernel to
# write (id == 1), the closest perf equivalent, with its LOST count.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_init "${1:-}"
secs=${2:-4}
shift 2 2>/dev/null || shift $#
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(250000 500000 1000000 1500000 2000000 3000000)
flood=$build/bin/event_flood

echo "# throughput, ${secs}s per rate; command: sudo bench/throughput.sh $build $secs ${rates[*]}"
echo "| offered ev/s | argus: achieved | argus: kept ev/s | argus lost | collector CPU | perf: achieved | perf: kept ev/s | perf lost |"
echo "|---|---|---|---|---|---|---|---|"
for r in "${rates[@]}"; do
  wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true
  "$argus_bin" record "${argus_flags[@]}" -o "$tmp/a.argus" -- "$flood" "$r" "$secs" 2 >"$tmp/out" 2>"$tmp/err"
  a_rate=$(sed -n 's/.*rate=\([0-9]*\).*/\1/p' "$tmp/out")
  a_secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$tmp/out")
  read -r a_ev a_lost a_cpu < <(sed -n 's/^argus record: \([0-9]*\) events, .*, \([0-9]*\) lost, .*collector CPU \([0-9.]*\) s.*/\1 \2 \3/p' "$tmp/err")
  a_kept=$(awk -v e="${a_ev:-0}" -v s="${a_secs:-0}" 'BEGIN { if (s > 0) printf "%.0f", e / s; else print "?" }')
  wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true
  perf record -q -a -e raw_syscalls:sys_exit --filter 'id == 1' -o "$tmp/p.data" -- "$flood" "$r" "$secs" 2 >"$tmp/out" 2>"$tmp/perr"
  p_rate=$(sed -n 's/.*rate=\([0-9]*\).*/\1/p' "$tmp/out")
  p_secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$tmp/out")
  perf report -i "$tmp/p.data" --stats >"$tmp/pstats" 2>/dev/null
  p_ev=$(awk '/SAMPLE events:/ {print $3; exit}' "$tmp/pstats")
  p_lost=$(perf_lost "$tmp/pstats")
  p_kept=$(awk -v e="${p_ev:-0}" -v s="${p_secs:-0}" 'BEGIN { if (s > 0) printf "%.0f", e / s; else print "?" }')
  printf '| %s | %s | %s | %s | %s s | %s | %s | %s |\n' "$r" "${a_rate:-?}" "$a_kept" \
    "${a_lost:-?}" "${a_cpu:-?}" "${p_rate:-?}" "$p_kept" "$p_lost"
done
