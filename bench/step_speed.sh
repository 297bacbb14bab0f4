#!/usr/bin/env bash
# Single-step speed (issue 13 §7, BRIEF §5 "Single-step speed here"), all
# peers in the same run on the same kind of target, pinned to CPU 0 with
# the stepper on CPU 1:
#
#   bench/step_speed.sh [BUILD_DIR] [N] [N_LLDB]
#
#   raw            PTRACE_SINGLESTEP + waitpid + GETREGS (bench/step_speed.c)
#   raw_spin       the same, waiting with WNOHANG polls (as the engine does)
#   engine         argus_step__next with a recording: full registers,
#                  decode, memory operands, changed registers, symbols
#   fast           argus_step__record_fast: the thread steps itself through
#                  an injected SIGTRAP handler (registers only); fast_total
#                  adds setup, teardown and decoding into a recording
#   lldb_step      lldb-16's SBThread.StepInstruction (Python SB API)
#   lldb_step_regs the same, reading the GPRs each step
#   lldb_plugin    `argus step --count 1000 --record F` inside that lldb
#                  (the plugin's backend: everything the engine records),
#                  interleaved with rounds of 1000 bare steps (lldb_step_il)
#                  so both see the same code and the same load; the
#                  lldb figures again on libc code (libc_*: the target's
#                  snprintf/qsort loop)
# N instructions for raw and engine (default 200000), N_LLDB for lldb
# (default 5000: it is ~10x slower).  Prints each rate and the ratios.
# Needs root (ptrace of a child is enough, but lldb-server wants it here).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
n=${2:-200000}
nl=${3:-5000}
bin=$build/bin/step_speed
target=$build/bin/step_speed_target
[ -x "$bin" ] && [ -x "$target" ] || { echo "bench/step_speed.sh: build first (no $bin)" >&2; exit 2; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
taskset -c 1 "$bin" "$n" | tee -a "$out" || exit 1
LLDB_DEBUGSERVER_PATH=/usr/lib/llvm-16/bin/lldb-server \
	taskset -c 1 /usr/bin/python3 "$top/bench/step_speed.py" "$target" "$nl" \
	"$build/lib/libargus-lldb.so" | tee -a "$out" || exit 1
# the plugin and lldb again on libc code (calls, returns, stack traffic)
LLDB_DEBUGSERVER_PATH=/usr/lib/llvm-16/bin/lldb-server \
	taskset -c 1 /usr/bin/python3 "$top/bench/step_speed.py" "$target libc" "$nl" \
	"$build/lib/libargus-lldb.so" | sed 's/^/libc_/' | tee -a "$out" || exit 1
awk '
  { split($4, r, "/"); rate[$1] = r[1] }
  END {
    printf "engine/raw %.2f  engine/raw_spin %.2f  engine/lldb_step %.1f  raw/lldb_step %.1f\n",
      rate["engine"] / rate["raw"], rate["engine"] / rate["raw_spin"],
      rate["engine"] / rate["lldb_step"], rate["raw"] / rate["lldb_step"]
    printf "fast/raw %.1f  fast/engine %.1f  fast/lldb_step %.0f  fast_total/raw %.1f\n",
      rate["fast"] / rate["raw"], rate["fast"] / rate["engine"],
      rate["fast"] / rate["lldb_step"], rate["fast_total"] / rate["raw"]
    if (rate["lldb_plugin"])
      printf "lldb_plugin/lldb_step_il %.2f  lldb_plugin/lldb_step_regs %.2f\n",
        rate["lldb_plugin"] / rate["lldb_step_il"], rate["lldb_plugin"] / rate["lldb_step_regs"]
    if (rate["libc_lldb_plugin"])
      printf "libc: lldb_plugin/lldb_step_il %.2f  lldb_plugin/lldb_step_regs %.2f\n",
        rate["libc_lldb_plugin"] / rate["libc_lldb_step_il"], rate["libc_lldb_plugin"] / rate["libc_lldb_step_regs"]
  }' "$out"
