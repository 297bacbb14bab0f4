#!/usr/bin/env bash
# The desktop-like mix of bench/desktop_mix.sh, run once (under a tracer or
# bare).  Prints "build_s=... busy_s=... secs=..." on stdout.
#
#   bench/desktop_workload.sh SRC_DIR BUILD_DIR DISPLAY_NUM
#
# What runs, all at once:
#   - an X server, Xvfb :N (1280x800x24), with six X clients: xeyes (follows
#     the pointer), xclock and oclock (tick every second), xload (polls the
#     load every second), xlogo, and ico (a rotating polyhedron, redrawn
#     every 40 ms, ~25 frames/s);
#   - a user at the mouse: xdotool moving the pointer over the screen every
#     20 ms (50 moves/s), so the server sends motion events and xeyes redraws;
#   - a background build: gcc -O2 compiling the project's graphlib/ and
#     trace/ symbols/ collector/ syscalls/ sources one file at a time (~35 files, ~7 s of one CPU).
# The build is the fixed amount of work: build_s is its wall time, busy_s
# the CPU time the whole machine spent (all CPUs, /proc/stat) while it ran,
# tracer included.  The X side is paced, so it costs the same in every run.
set -uo pipefail
src=$1 build=$2 dnum=${3:-77}
. "$src/bench/lib.sh"
export DISPLAY=:$dnum
pids=()
cleanup() { local i; for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
xdpyinfo >/dev/null 2>&1 || { echo "desktop_workload: Xvfb $DISPLAY did not start" >&2; exit 1; }

xeyes -geometry 300x200+0+0 2>/dev/null & pids+=($!)
xclock -update 1 -geometry 200x200+320+0 2>/dev/null & pids+=($!)
oclock -geometry 200x200+540+0 2>/dev/null & pids+=($!)
xload -update 1 -geometry 300x120+760+0 2>/dev/null & pids+=($!)
xlogo -geometry 200x200+0+240 2>/dev/null & pids+=($!)
ico -sleep 0.04 -geometry 400x400+240+240 >/dev/null 2>&1 & pids+=($!)
sleep 1

# the user: the pointer goes round a circle, one move every 20 ms
(
  cmd=()
  for i in $(seq 0 99); do
    x=$(awk -v i="$i" 'BEGIN { printf "%d", 640 + 300 * cos(i * 0.0628) }')
    y=$(awk -v i="$i" 'BEGIN { printf "%d", 400 + 250 * sin(i * 0.0628) }')
    cmd+=(mousemove "$x" "$y" sleep 0.02)
  done
  while :; do xdotool "${cmd[@]}" 2>/dev/null || sleep 0.5; done
) & pids+=($!)
sleep 1

files=("$src"/graphlib/*.c "$src"/{trace,symbols,collector,syscalls}/*.c)
b0=$(busy_jiffies); t0=$(date +%s.%N)
for f in "${files[@]}"; do
  gcc -O2 -c -w -D_GNU_SOURCE -I"$src/trace" -I"$src/symbols" -I"$src/collector" -I"$src/syscalls" -I"$src/graphlib" -I"$src/analysis" -I"$src/kernel-patch" \
      -I"$build/gen" "$f" -o /dev/null || echo "desktop_workload: compiling $f failed" >&2
done
t1=$(date +%s.%N); b1=$(busy_jiffies)
hz=$(getconf CLK_TCK)
awk -v t0="$t0" -v t1="$t1" -v b0="$b0" -v b1="$b1" -v hz="$hz" \
  'BEGIN { printf "build_s=%.3f busy_s=%.2f\n", t1 - t0, (b1 - b0) / hz }'
# under argus with kernel.bpf_stats_enabled=1: the CPU time its BPF
# programs took so far (they unload when the recording ends)
if [ "${ARGUS_BENCH_BPF_STATS:-0}" = 1 ]; then
  bpftool prog show 2>/dev/null | awk '/ name on_/ {
      for (i = 1; i < NF; i++) if ($i == "run_time_ns") t += $(i + 1) }
    END { printf "bpf_s=%.3f\n", t / 1e9 }'
fi
