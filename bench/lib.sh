# bench/lib.sh - helpers shared by the collector benchmarks (sourced).
#
# This VM is shared: other sessions run builds, tests and their own
# collectors.  A "bare" run while someone else's argusd has its BPF
# programs attached is not bare at all (every syscall then pays for the
# tracepoints), so every measurement first waits for a quiet machine:
# no foreign on_sys_exit program loaded and the CPUs at least 85% idle
# over one second.  It waits at most $ARGUS_BENCH_QUIET_S seconds (the
# scripts' default: 10), then measures anyway and says so on stderr: on a
# machine that is never quiet, the interleaved runs and same-run ratios
# are what is left.

# mono: CLOCK_MONOTONIC now, ns (the trace's clock; bash has none).
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# median_range: "MEDIAN MIN MAX COUNT" of the numbers on stdin, nothing if none.
median_range() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2, a[1], a[NR], NR}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

# record_stacks_summary: "CPU_S UNWOUND MEMO" from `argus record`'s last
# summary line on stdin ("collector CPU 0.013 s; 33 stacks DWARF-unwound,
# 16 unwinds from the memo"), nothing if there is none.
record_stacks_summary() { sed -n 's/.*collector CPU \([0-9.]*\) s; \([0-9]*\) stacks DWARF-unwound, \([0-9]*\) unwinds from the memo.*/\1 \2 \3/p' | tail -1; }

# foreign_bpf: how many argus sys_exit programs are loaded right now.
foreign_bpf() { bpftool prog show 2>/dev/null | grep -c 'name on_sys_exit' || true; }

# wait_quiet [MAX_SECONDS]: until no argus BPF program is attached and the
# load is low; returns 1 (and says so on stderr) if it never got quiet.
wait_quiet() {
  local max=${1:-120} t=0
  while [ "$t" -lt "$max" ]; do
    if [ "$(foreign_bpf)" -eq 0 ] && [ "$(idle_pct)" -ge 85 ]; then
      return 0
    fi
    sleep 1; t=$((t + 2))
  done
  echo "bench: machine not quiet after ${max}s (foreign BPF programs: $(foreign_bpf), idle: $(idle_pct)%); measuring anyway" >&2
  return 1
}

# busy_jiffies: CPU time (all CPUs, user+nice+system+irq+softirq+steal) in
# USER_HZ ticks since boot, from /proc/stat.
busy_jiffies() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }

# idle_pct: percent of CPU time idle over the next second.
idle_pct() {
  local a b
  a=$(awk '/^cpu / {print $5+$6, $2+$3+$4+$5+$6+$7+$8+$9; exit}' /proc/stat)
  sleep 1
  b=$(awk '/^cpu / {print $5+$6, $2+$3+$4+$5+$6+$7+$8+$9; exit}' /proc/stat)
  echo "$a $b" | awk '{d = $4 - $2; print (d > 0 ? int(100 * ($3 - $1) / d) : 0)}'
}

# perf_lost FILE: samples perf lost, from `perf report --stats` output (the
# sum of the per-event LOST_SAMPLES counts; the aggregated section counts
# LOST records, not samples).
perf_lost() { awk '/ stats:$/ && !/^Aggregated/ {ev = 1} ev && /LOST_SAMPLES events:/ {n += $3} END {print n + 0}' "$1"; }

# tracecmd_record OUT.dat CMD...: trace-cmd record with the events perf
# records too (sched_switch, sched_waking, raw_syscalls) while CMD runs.
# On this kernel trace-cmd needs bench/tracecmd_shim.c preloaded (it
# writes the function tracer's files, which the kernel refuses); the shim
# is taken from $build/lib when it was built.
tracecmd_record() {
  local out=$1; shift
  local shim=${build:-}/lib/tracecmd_shim.so
  [ -f "$shim" ] || shim=
  LD_PRELOAD=$shim trace-cmd record -q -o "$out" -e sched_switch -e sched_waking -e raw_syscalls "$@"
}

# tracecmd_stats FILE.dat: "EVENTS LOST" of a trace-cmd recording: events
# read into the file, and those overrun or dropped in the kernel buffers.
tracecmd_stats() {
  trace-cmd report -i "$1" --stat 2>/dev/null | awk '/^read events:/ {n += $3}
    /^overrun:/ {l += $2} /^dropped events:/ {l += $3} END {print n + 0, l + 0}'
}

# bench_init BUILD_DIR: what every collector benchmark starts from: build
# (default $top/build), argus_bin, argus_flags (ARGUS_BENCH_ARGUS_FLAGS,
# e.g. --wait-stacks, given to argus record/start) and tmp, a scratch dir
# removed on exit.  Needs $top.
bench_init() {
  build=${1:-$top/build}
  argus_bin=$build/bin/argus
  read -r -a argus_flags <<<"${ARGUS_BENCH_ARGUS_FLAGS:-}"
  tmp=$(mktemp -d /tmp/argus-bench.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
}

# bench_lldb_mix NAME DISPLAY_NUM FILL_S: what the live-debugger benchmarks
# (lldb_diagnose.sh, until_end.sh) start from, after bench_init: lldb-16,
# flock and the desktop mix's tools are there, the build has the plugin
# (plugin=), we are root; a private collector (a 1 GiB ring in $tmp, its
# own control socket: ARGUS_RUN_DIR) records the desktop mix
# (desktop_workload.sh on DISPLAY_NUM, run again and again) for FILL_S
# seconds, and keeps recording it until exit, when the mix, the collector
# and any flock left over are stopped and $tmp removed.
bench_lldb_mix() {
  local name=$1 dnum=$2 fill=$3 t
  plugin=$build/lib/libargus-lldb.so
  export LLDB_DEBUGSERVER_PATH=${LLDB_DEBUGSERVER_PATH:-/usr/lib/llvm-16/bin/lldb-server}
  for t in lldb-16 flock Xvfb xdotool; do
    command -v $t >/dev/null || { echo "$name: $t missing (scripts/install-deps.sh)" >&2; exit 1; }
  done
  [ -x "$argus_bin" ] && [ -f "$plugin" ] || { echo "$name: build first ($argus_bin, $plugin)" >&2; exit 1; }
  [ "$(id -u)" -eq 0 ] || { echo "$name: run as root (the collector loads BPF)" >&2; exit 1; }
  export ARGUS_RUN_DIR=$tmp/run
  bench_mixpid=
  bench_mixdisplay=$dnum
  trap 'bench_lldb_mix_stop' EXIT
  "$argus_bin" start --dir "$tmp/ring" --size 1G --no-watch-interactive >"$tmp/start.log" 2>&1 ||
    { cat "$tmp/start.log" >&2; exit 1; }
  ( while :; do "$top/bench/desktop_workload.sh" "$top" "$build" "$dnum" >/dev/null 2>&1; done ) &
  bench_mixpid=$!
  echo "$name: filling the ring with ${fill} s of the desktop mix" >&2
  sleep "$fill"
}
bench_lldb_mix_stop() {
  [ -n "${bench_mixpid:-}" ] && kill "$bench_mixpid" 2>/dev/null
  # the loop's current round too (its own EXIT trap stops Xvfb and the
  # clients): killing the loop's shell alone left it running
  pkill -TERM -f "desktop_workload.sh $top $build ${bench_mixdisplay:-}" 2>/dev/null
  pkill -f "flock $tmp/L" 2>/dev/null
  "$argus_bin" stop >/dev/null 2>&1
  wait 2>/dev/null
  rm -rf "$tmp"
}
