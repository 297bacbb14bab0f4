#!/usr/bin/env bash
# Tracing overhead, as slowdown ratios against a bare run in the same script
# (this VM is shared and noisy, so only same-run ratios mean anything).
#
#   sudo bench/overhead.sh [BUILD_DIR] [REPS]
#
# Workloads: `perf bench sched pipe -l 100000` pinned to CPU 0 (unpinned,
# tracing makes it *faster* here by keeping the vCPUs out of idle, BRIEF §5)
# and `perf bench sched messaging -g 4 -l 300` (hackbench).
# Tracers: argus record; perf record -a with sched_switch, sched_waking and
# raw_syscalls; trace-cmd record with the same events.
# Each cell is the median of REPS runs of the workload's own "Total time".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
reps=${2:-3}
argus_bin=$build/bin/argus
tmp=$(mktemp -d /tmp/argus-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

pipe_cmd=(taskset -c 0 perf bench sched pipe -l 100000)
msg_cmd=(perf bench sched messaging -g 4 -l 300)

total_time() { sed -n 's/.*Total time: *\([0-9.]*\).*/\1/p' | tail -1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

run_bare() { "$@" 2>&1 | total_time; }
run_argus() {
  "$argus_bin" record -o "$tmp/a.argus" -- "$@" >"$tmp/out" 2>"$tmp/err"
  total_time <"$tmp/out"
  sed -n 's/^argus record: \([0-9]*\) events, .* (\([0-9.]*\) bytes\/event), \([0-9]*\) lost.*/\1 \2 \3/p' "$tmp/err" >"$tmp/argus_stats"
}
run_perf() {
  perf record -q -a -e sched:sched_switch -e sched:sched_waking \
    -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -o "$tmp/p.data" -- "$@" >"$tmp/out" 2>"$tmp/err"
  total_time <"$tmp/out"
  perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3}' | head -1 >"$tmp/perf_stats"
}
run_tracecmd() {
  if ! command -v trace-cmd >/dev/null; then echo "n/a"; return; fi
  trace-cmd record -q -o "$tmp/t.dat" -e sched_switch -e sched_waking -e raw_syscalls "$@" >"$tmp/out" 2>"$tmp/err"
  local t; t=$(total_time <"$tmp/out")
  if [ -z "$t" ]; then echo "fail"; else echo "$t"; fi
}

measure() { # name tracer cmd...
  local tracer=$1; shift
  local vals=() v
  for _ in $(seq "$reps"); do
    v=$("run_$tracer" "$@")
    [[ "$v" =~ ^[0-9.]+$ ]] || { echo "$v"; return; }
    vals+=("$v")
  done
  printf '%s\n' "${vals[@]}" | median
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

report() { # label cmd...
  local label=$1; shift
  local bare argus perf tc
  bare=$(measure bare "$@")
  argus=$(measure argus "$@"); read -r aev abpe alost <"$tmp/argus_stats" || true
  perf=$(measure perf "$@"); pev=$(cat "$tmp/perf_stats" 2>/dev/null)
  tc=$(measure tracecmd "$@")
  printf '| %s | %s s | %s s (%s) | %s s (%s) | %s |\n' "$label" "$bare" \
    "$argus" "$(ratio "$argus" "$bare")" "$perf" "$(ratio "$perf" "$bare")" \
    "$([ "$tc" = fail ] && echo 'fails: "Can'"'"'t enable ftrace"' || echo "$tc s ($(ratio "$tc" "$bare"))")"
  printf '|   events kept | | argus %s events, %s B/event, %s lost | perf %s sched+syscall events | |\n' \
    "${aev:-?}" "${abpe:-?}" "${alost:-?}" "${pev:-?}"
}

echo "# overhead, median of $reps runs; command: sudo bench/overhead.sh $build $reps"
echo "| workload | bare | argus record | perf record -a | trace-cmd record |"
echo "|---|---|---|---|---|"
report "perf bench sched pipe -l 100000 (taskset -c 0)" "${pipe_cmd[@]}"
report "perf bench sched messaging -g 4 -l 300" "${msg_cmd[@]}"
