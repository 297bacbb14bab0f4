#!/usr/bin/env bash
# Overhead and trace density on a desktop-like mix (bench/desktop_workload.sh:
# Xvfb with six X clients and a pointer moving 50 times a second, plus a
# background gcc build), bare and under each tracer, in the same run.
#
#   sudo bench/desktop_mix.sh [BUILD_DIR] [REPS]
#   (ARGUS_BENCH_MODES="argus argusd" runs only those of: bare argus argusd
#   perf tracecmd; ARGUS_BENCH_ARGUS_FLAGS="--wait-stacks" adds flags to
#   argus record and argus start)
#
# Overhead, three ways (medians of REPS):
#   - build: the wall time of the background build (fixed work);
#   - CPU: CPU time the whole machine spent during the build (all CPUs,
#     /proc/stat), tracers included; the X side is paced, so its share is
#     the same in every run.  Other sessions' work on the machine counts
#     here too, so read it only when the machine was quiet;
#   - argus's own CPU: its collector's CPU time plus the run time of its
#     BPF programs (kernel.bpf_stats_enabled, which itself adds two clock
#     reads per program run), as a share of the machine (wall x CPUs).
#     Measured two ways: `argus record -- WORKLOAD` (whole run, so its
#     start-up, BPF loading and final flush included), and the always-on
#     daemon in steady state: argusd started beforehand, and only what it
#     and its BPF programs spent between the workload's start and end
#     counted (argusd's threads' /proc/PID/task/*/schedstat run time, ns,
#     and bpftool's run_time_ns).  The second is the 24x7 case the goal
#     is about; both are printed.
# Density (argus): events/s, bytes/event on disk, and how many minutes of
# this mix a 2 GiB ring holds.  perf: perf.data bytes per sample.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_init "${1:-}"
reps=${2:-3}
wl=("$top/bench/desktop_workload.sh" "$top" "$build" 77)
for t in Xvfb xdotool xeyes ico gcc; do
  command -v $t >/dev/null || { echo "desktop_mix: $t missing (scripts/install-deps.sh)" >&2; exit 1; }
done

# daemon_ns PID: CPU time of all of PID's threads so far, ns (schedstat)
daemon_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d\n", s}'; }
# bpf_ns: run time of argus's BPF programs so far, ns (bpf_stats_enabled)
bpf_ns() {
  bpftool prog show 2>/dev/null | awk '/ name on_/ {
      for (i = 1; i < NF; i++) if ($i == "run_time_ns") t += $(i + 1) }
    END { printf "%d\n", t }'
}

# every per-mode result file exists, so a mode left out reads as empty
touch "$tmp"/{astats,aspan,asize,abpf,pstats,tstats,dstats,dwatch,dhangs}

run() { # mode rep -> appends "build busy" to $tmp/$mode
  local mode=$1 out=$tmp/out.$1
  wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true
  case $mode in
    bare) "${wl[@]}" >"$out" 2>/dev/null ;;
    argus)
      sysctl -q kernel.bpf_stats_enabled=1
      local w0=$(date +%s.%N)
      ARGUS_BENCH_BPF_STATS=1 "$argus_bin" record "${argus_flags[@]}" -o "$tmp/a.argus" -- "${wl[@]}" >"$out" 2>"$tmp/aerr"
      local w1=$(date +%s.%N)
      sysctl -q kernel.bpf_stats_enabled=0
      echo "$(sed -n 's/^bpf_s=\([0-9.]*\).*/\1/p' "$out") $(awk -v a="$w0" -v b="$w1" 'BEGIN {print b - a}')" >>"$tmp/abpf"
      sed -n 's/^argus record: \([0-9]*\) events, .* (\([0-9.]*\) bytes\/event), \([0-9]*\) lost,.*collector CPU \([0-9.]*\) s.*/\1 \2 \3 \4/p' "$tmp/aerr" >>"$tmp/astats"
      "$argus_bin" dump "$tmp/a.argus" --stats 2>/dev/null | sed -n 's/^# \([0-9]*\) events in [0-9]* chunks, \([0-9.]*\) s.*/\1 \2/p' >>"$tmp/aspan"
      stat -c %s "$tmp/a.argus" >>"$tmp/asize" ;;
    argusd)
      # the steady state of an always-on daemon; skipped if one is running
      if "$argus_bin" status >/dev/null 2>&1; then
        echo "desktop_mix: an argusd is already running; skipping the daemon runs" >&2; return
      fi
      sysctl -q kernel.bpf_stats_enabled=1
      "$argus_bin" start "${argus_flags[@]}" --dir "$tmp/ring" --size 256M >/dev/null 2>"$tmp/derr" ||
        { echo "desktop_mix: argus start: $(cat "$tmp/derr")" >&2; sysctl -q kernel.bpf_stats_enabled=0; return; }
      local dpid; dpid=$(pgrep -xn argusd)
      sleep 1
      local c0 b0 w0 c1 b1 w1
      c0=$(daemon_ns "$dpid"); b0=$(bpf_ns); w0=$(date +%s.%N)
      "${wl[@]}" >"$out" 2>/dev/null &
      local wlpid=$!
      # the live hang watch was on: how many threads it watched midway
      # (the X clients, as display servers' clients)
      sleep 4
      "$argus_bin" status 2>/dev/null | awk '$1 == "watching" { print $2; exit }' >>"$tmp/dwatch"
      wait "$wlpid"
      c1=$(daemon_ns "$dpid"); b1=$(bpf_ns); w1=$(date +%s.%N)
      # what the watch reported (its keeper's saves and diagnoses run in
      # child processes, not counted above): argus status's hangs line
      "$argus_bin" status 2>/dev/null | sed -n 's/^hangs *//p' | cut -d';' -f1 >>"$tmp/dhangs"
      "$argus_bin" stop >/dev/null 2>&1
      sysctl -q kernel.bpf_stats_enabled=0
      awk -v c0="$c0" -v c1="$c1" -v b0="$b0" -v b1="$b1" -v w0="$w0" -v w1="$w1" \
        'BEGIN { printf "%.4f %.4f %.3f\n", (c1 - c0) / 1e9, (b1 - b0) / 1e9, w1 - w0 }' >>"$tmp/dstats" ;;
    perf)
      perf record -q -a -e sched:sched_switch -e sched:sched_waking \
        -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -o "$tmp/p.data" -- "${wl[@]}" >"$out" 2>/dev/null
      local n; n=$(perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
      echo "${n:-0} $(stat -c %s "$tmp/p.data")" >>"$tmp/pstats" ;;
    tracecmd)
      tracecmd_record "$tmp/t.dat" "${wl[@]}" >"$out" 2>"$tmp/terr"
      tracecmd_stats "$tmp/t.dat" >>"$tmp/tstats" ;;
  esac
  sed -n 's/^build_s=\([0-9.]*\) busy_s=\([0-9.]*\).*/\1 \2/p' "$out" >>"$tmp/$mode"
}

for rep in $(seq "$reps"); do
  for mode in ${ARGUS_BENCH_MODES:-bare argus argusd perf tracecmd}; do run "$mode"; done
done
col() { awk -v c="$1" '{print $c}' "$2" 2>/dev/null | median; }
declare -A b c
for m in bare argus perf tracecmd; do b[$m]=$(col 1 "$tmp/$m"); c[$m]=$(col 2 "$tmp/$m"); done
modes=" ${ARGUS_BENCH_MODES:-bare argus argusd perf tracecmd} "
# cell MODE VALUE BARE: "VALUE s (ratio)", "not run" when ARGUS_BENCH_MODES
# left MODE out, "fails" when it ran and gave nothing
cell() {
  case $modes in *" $1 "*) ;; *) echo "not run"; return ;; esac
  [ -n "${2:-}" ] && echo "$2 s ($(ratio "$2" "$3"))" || echo "fails"
}
echo "# desktop mix, median of $reps runs; command: ${ARGUS_BENCH_ARGUS_FLAGS:+ARGUS_BENCH_ARGUS_FLAGS=\"$ARGUS_BENCH_ARGUS_FLAGS\" }sudo bench/desktop_mix.sh $build $reps"
echo "| | bare | argus record | perf record -a | trace-cmd record |"
echo "|---|---|---|---|---|"
echo "| build wall time | ${b[bare]} s | $(cell argus "${b[argus]}" "${b[bare]}") | $(cell perf "${b[perf]}" "${b[bare]}") | $(cell tracecmd "${b[tracecmd]}" "${b[bare]}") |"
echo "| machine CPU during the build | ${c[bare]} s | $(cell argus "${c[argus]}" "${c[bare]}") | $(cell perf "${c[perf]}" "${c[bare]}") | $(cell tracecmd "${c[tracecmd]}" "${c[bare]}") |"
ev=$(col 1 "$tmp/astats" 2>/dev/null); bpe=$(col 2 "$tmp/astats"); lost=$(awk '{s+=$3} END {print s+0}' "$tmp/astats"); acpu=$(col 4 "$tmp/astats")
rate=$(awk '{ if ($2 > 0) print $1 / $2 }' "$tmp/aspan" | median)
bps=$(paste "$tmp/asize" "$tmp/aspan" | awk '{ if ($3 > 0) print $1 / $3 }' | median)
pn=$(col 1 "$tmp/pstats"); psz=$(col 2 "$tmp/pstats")
# argus's own cost, whatever else runs on the machine: the collector's CPU
# time plus its BPF programs' run time, over the recording's wall time x CPUs
share=$(paste "$tmp/abpf" "$tmp/astats" | awk -v n="$(nproc)" '{ if ($2 > 0) print 100 * ($1 + $6) / ($2 * n) }' | median)
bpf=$(awk '{print $1}' "$tmp/abpf" | median)
[ -s "$tmp/astats" ] &&
  echo "| argus's own CPU (collector + BPF programs) / (wall x $(nproc) CPUs) | | $(printf '%.2f' "${share:-0}")% (BPF $bpf s, collector $(col 4 "$tmp/astats") s per run) | | |"
if [ -s "$tmp/dstats" ]; then
  dshare=$(awk -v n="$(nproc)" '{ if ($3 > 0) print 100 * ($1 + $2) / ($3 * n) }' "$tmp/dstats" | median)
  echo "| always-on argusd, steady state: (argusd + BPF) / (wall x $(nproc) CPUs) | | $(printf '%.2f' "${dshare:-0}")% (BPF $(col 2 "$tmp/dstats") s, argusd $(col 1 "$tmp/dstats") s per $(col 3 "$tmp/dstats") s) | | |"
  echo "argusd steady state, every run (argusd s, BPF s, wall s): $(tr '\n' ';' <"$tmp/dstats")"
  echo "argusd's live hang watch, threads watched 4 s into each run: $(tr '\n' ' ' <"$tmp/dwatch" 2>/dev/null)"
  echo "argusd's hangs in each run: $(paste -sd '|' "$tmp/dhangs" 2>/dev/null)"
fi
[ -s "$tmp/astats" ] || exit 0
echo
echo "argus: $ev events per run (median), $(printf '%.0f' "${rate:-0}") events/s, $bpe bytes/event, $lost lost in all runs, collector CPU $acpu s per run"
awk -v bps="${bps:-0}" 'BEGIN { if (bps > 0) printf "argus: %.1f KiB/s on disk -> a 2 GiB ring holds %.0f minutes (%.1f hours) of this mix\n", bps / 1024, 2^31 / bps / 60, 2^31 / bps / 3600 }'
awk -v n="${pn:-0}" -v s="${psz:-0}" 'BEGIN { if (n > 0) printf "perf: %d samples per run (median), %.1f bytes/sample in perf.data\n", n, s / n }'
tn=$(col 1 "$tmp/tstats"); tl=$(awk '{s += $2} END {print s + 0}' "$tmp/tstats" 2>/dev/null)
[ -n "$tn" ] && echo "trace-cmd: $tn events per run (median), $tl lost in all runs"
case $modes in *" tracecmd "*)
  [ -s "$tmp/tracecmd" ] || echo "trace-cmd: fails here: $(grep -m1 -v '^tracecmd_shim' "$tmp/terr" 2>/dev/null)" ;;
esac
exit 0
