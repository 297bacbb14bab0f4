#!/usr/bin/env bash
# What tracing adds to one syscall, in ns, pinned to CPU 0:
#
#   sudo bench/syscall_cost.sh [BUILD_DIR] [ROUNDS] [OTHER_BUILD_DIR]
#
# bench/syscall_loop runs 2 M getppid() (argus records nothing for it: the
# cost is the syscall slow path plus the dispatch into BPF that every call
# on the machine pays), 2 M one-byte write()s to /dev/null (an exit
# record with the fd's object) and 2 M futex(FUTEX_WAKE) with no waiter
# (an entry record and an exit record), bare, under the BPF floor's empty programs
# (bench/floor_probe), under `argus record`, under `argus record
# --all-entries` ("argus-raw-enter": entries through the raw sys_enter
# tracepoint, every syscall of the machine dispatched into BPF, instead of
# the per-call syscalls:sys_enter_NAME tracepoints of the entry set; what
# the per-call ones save, and what their ~0.7 s detach at the stop buys)
# and OTHER_BUILD_DIR's (an A/B of two builds).  Each cell is the median over ROUNDS (default 5)
# rounds of "ns per syscall", the tracers taking turns within a round.
# One thread and no scheduling: much steadier than the ping-pong of
# bench/overhead.sh, so it can tell a 50 ns change from noise.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_init "${1:-}"
rounds=${2:-5}
other=${3:-}
loop=$build/bin/syscall_loop
[ -x "$loop" ] || { echo "bench/syscall_cost.sh: no $loop (build first)" >&2; exit 2; }
[ -z "$other" ] || [ -x "$other/bin/argus" ] || { echo "bench/syscall_cost.sh: no $other/bin/argus" >&2; exit 2; }
tracers="bare floor argus argus-raw-enter${other:+ other}"

ns() { sed -n 's/^\([0-9.]*\) ns\/syscall$/\1/p'; }
run() { # TRACER CALL
  local c=(taskset -c 0 "$loop" "$2" 2000000)
  wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true
  case $1 in
    bare) "${c[@]}" | ns ;;
    floor) "$build/bin/floor_probe" -- "${c[@]}" | ns ;;
    argus) "$argus_bin" record -o "$tmp/s.argus" -- "${c[@]}" 2>/dev/null | ns ;;
    argus-raw-enter) "$argus_bin" record --all-entries -o "$tmp/s.argus" -- "${c[@]}" 2>/dev/null | ns ;;
    other) "$other/bin/argus" record -o "$tmp/s.argus" -- "${c[@]}" 2>/dev/null | ns ;;
  esac
}

echo "# ns per syscall, median of $rounds rounds; command: sudo bench/syscall_cost.sh $build $rounds${other:+ $other}"
printf '| call |'; for t in $tracers; do printf ' %s |' "$t"; done; echo
printf '|---|'; for t in $tracers; do printf -- '---|'; done; echo
for call in getppid write futex; do
  for _ in $(seq "$rounds"); do
    for t in $tracers; do run "$t" "$call" >>"$tmp/$call.$t"; done
  done
  printf '| %s |' "$call"
  for t in $tracers; do
    printf ' %s (%s) |' "$(median <"$tmp/$call.$t")" "$(tr '\n' ' ' <"$tmp/$call.$t" | sed 's/ $//')"
  done
  echo
done
