#!/usr/bin/env bash
# The interposer's cost on an uncontended pthread mutex (issue 14: at most
# 5 ns more than bare per lock+unlock pair), pinned to CPU 0:
#
#   sudo bench/interpose_mutex.sh [BUILD_DIR] [ROUNDS]
#
# bench/interpose_mutex times 20 M lock+unlock pairs (best of 5 loops) in
# three set-ups that take turns within each round:
#   bare      no preload
#   off       LD_PRELOAD=libargus-interpose.so, no collector to register
#             with (recording off: the wrappers' "ring?" test only)
#   on        the same with a private collector running: the process has
#             registered its ring, so lock is trylock-first and unlock
#             reads the lock word (the path every traced app pays)
# Each cell is the median over ROUNDS (default 5) rounds; the ratio and
# the difference to bare are of the same run.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_init "${1:-}"
rounds=${2:-5}
bin=$build/bin/interpose_mutex
lib=$build/lib/libargus-interpose.so
[ -x "$bin" ] && [ -f "$lib" ] || { echo "bench/interpose_mutex.sh: no $bin or $lib (build first)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/interpose_mutex.sh: needs root (starts a collector)" >&2; exit 2; }

export ARGUS_RUN_DIR=$tmp/run
mkdir -p "$tmp/ring" "$tmp/none"
"$argus_bin" start --dir "$tmp/ring" --size 64M --no-watch-interactive >/dev/null ||
  { echo "bench/interpose_mutex.sh: argus start failed" >&2; exit 1; }
trap '"$argus_bin" stop >/dev/null 2>&1; rm -rf "$tmp"' EXIT

run() { # SETUP -> "NS" on stdout; fails if the ring state is not the expected one
  local out want
  case $1 in
    bare) out=$(taskset -c 0 "$bin") want=off ;;
    off) out=$(ARGUS_RUN_DIR=$tmp/none LD_PRELOAD=$lib taskset -c 0 "$bin") want=off ;;
    on) out=$(LD_PRELOAD=$lib taskset -c 0 "$bin") want=on ;;
  esac
  grep -qx "ring=$want" <<<"$out" || { echo "bench/interpose_mutex.sh: $1: expected ring=$want: $out" >&2; return 1; }
  sed -n 's/^\([0-9.]*\) ns\/pair$/\1/p' <<<"$out"
}

for r in $(seq "$rounds"); do
  for s in bare off on; do
    v=$(run "$s") || exit 1
    echo "$v" >>"$tmp/$s"
  done
done
b=$(median <"$tmp/bare")
printf '%-6s %10s %10s %10s\n' setup "ns/pair" "vs bare" "+ns"
for s in bare off on; do
  m=$(median <"$tmp/$s")
  printf '%-6s %10.2f %10s %+10.2f   (rounds: %s)\n' "$s" "$m" "$(ratio "$m" "$b")" \
    "$(awk -v a="$m" -v b="$b" 'BEGIN { print a - b }')" "$(paste -sd ' ' "$tmp/$s")"
done
