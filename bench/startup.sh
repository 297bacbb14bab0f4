#!/usr/bin/env bash
# How long a recorder takes to start and stop around a command that does
# nothing, against perf record doing the same in the same rounds:
#
#   sudo bench/startup.sh [BUILD_DIR] [ROUNDS (5)]
#
# Each round runs, in turn: `true` bare, `argus record -o F -- true`,
# `perf record -a -e sched:sched_switch -e sched:sched_waking
# -e raw_syscalls:sys_exit -o F -- true` (the tracepoints of overhead.sh's
# perf peer), and `argus-verifier-stats` (the kernel's verification of
# argus's BPF programs alone, the part of the start the kernel spends).
# Prints each one's wall time per round (bash's $EPOCHREALTIME, no
# process started to read a clock), the medians, and argus over perf; the
# order is the same in every round.  ARGUS_BENCH_ARGUS_FLAGS go to argus
# record; each round first waits up to ARGUS_BENCH_QUIET_S (10) seconds
# for a quiet machine (bench/lib.sh).  Where argus's time goes
# (docs/collector.md, "Kernel quirks"): the load of its BPF programs (the
# verification column is part of it) and, at the stop, detaching its
# syscall-entry tracepoints, each of which waits for an RCU grace period
# in the kernel (~0.7 s of the 1.2 s in session 27).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_init "${1:-}"
rounds=${2:-5}
[ -x "$argus_bin" ] || { echo "bench/startup.sh: no $argus_bin (build it first)" >&2; exit 2; }
# (an older build has no argus-verifier-stats: its column is then empty)
stats_bin=$build/bin/argus-verifier-stats
# now in us, from $EPOCHREALTIME ("s.us"); a duration in ms
now_us() { local t=$EPOCHREALTIME; echo $(( ${t%.*} * 1000000 + 10#${t#*.} )); }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }
echo "round  bare_ms  argus_ms  perf_ms  verify_ms"
for r in $(seq 1 "$rounds"); do
	wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true
	t0=$(now_us); true; t1=$(now_us)
	"$argus_bin" record "${argus_flags[@]}" -o "$tmp/a.argus" -- true >/dev/null 2>"$tmp/a.err" ||
		{ echo "bench/startup.sh: argus record failed:" >&2; cat "$tmp/a.err" >&2; exit 1; }
	t2=$(now_us)
	perf record -q -a -e sched:sched_switch -e sched:sched_waking -e raw_syscalls:sys_exit \
		-o "$tmp/p.data" -- true >/dev/null 2>&1 ||
		{ echo "bench/startup.sh: perf record failed" >&2; exit 1; }
	t3=$(now_us)
	verify=-
	if [ -x "$stats_bin" ]; then
		"$stats_bin" >"$tmp/v.out" 2>&1 || { echo "bench/startup.sh: argus-verifier-stats failed" >&2; cat "$tmp/v.out" >&2; exit 1; }
		verify=$(sed -n 's/.*insns, \([0-9.]*\) s of verification.*/\1/p' "$tmp/v.out" |
			 awk '{printf "%.0f", $1 * 1000}')
	fi
	printf "%5d  %7s  %8s  %7s  %9s\n" "$r" "$(ms "$t0" "$t1")" "$(ms "$t1" "$t2")" \
		"$(ms "$t2" "$t3")" "$verify" | tee -a "$tmp/rounds"
done
read -r b_med _ < <(awk '{print $2}' "$tmp/rounds" | median_range)
read -r a_med a_lo a_hi _ < <(awk '{print $3}' "$tmp/rounds" | median_range)
read -r p_med p_lo p_hi _ < <(awk '{print $4}' "$tmp/rounds" | median_range)
read -r v_med _ < <(awk '$5 != "-" {print $5}' "$tmp/rounds" | median_range)
echo "bare true: ${b_med} ms; argus record -- true: ${a_med} ms (${a_lo}-${a_hi}); perf record -a -- true: ${p_med} ms (${p_lo}-${p_hi}); argus / perf $(ratio "$a_med" "$p_med"); verification of argus's BPF programs ${v_med:--} ms"
