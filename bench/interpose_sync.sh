#!/usr/bin/env bash
# The interposer's costs beyond the uncontended mutex (issue 14), in one
# run, each cell the median over ROUNDS rounds in which the set-ups take
# turns; ratios are of the same run:
#
#   bench/interpose_sync.sh [BUILD_DIR] [ROUNDS (5)]
#
#   1. one recorded event (aip_put into a ring registered with a private
#      collector, bench/interpose_put; goal <= 50 ns) against one uprobe
#      hit on a function of the same program (perf_event_open on the
#      uprobe PMU: the probed loop minus the same loop unprobed);
#   2. the uncontended pthread_rwlock_rdlock + unlock pair, one thread
#      pinned to CPU 0: bare / LD_PRELOAD without a collector (off) /
#      LD_PRELOAD registered (on);
#   3. a contended mutex: 4 threads x 200,000 lock/++/unlock on one
#      mutex (bench/interpose_sync contended), bare / off / on: every
#      contended lock writes two records and the unlock after it one.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_init "${1:-}"
rounds=${2:-5}
# sizes (smaller only to check the script itself: ARGUS_BENCH_SMOKE=1)
if [ "${ARGUS_BENCH_SMOKE:-0}" = 1 ]; then
  put_args=(20000 1) rd_args=(20000 1) ct_args=(4 2000 1)
else
  put_args=() rd_args=() ct_args=()
fi
put=$build/bin/interpose_put
sync=$build/bin/interpose_sync
lib=$build/lib/libargus-interpose.so
for f in "$put" "$sync" "$lib"; do
  [ -e "$f" ] || { echo "bench/interpose_sync.sh: no $f (build first)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "bench/interpose_sync.sh: needs root (a collector, uprobes)" >&2; exit 2; }

export ARGUS_RUN_DIR=$tmp/run
mkdir -p "$tmp/ring" "$tmp/none"
"$argus_bin" start --dir "$tmp/ring" --size 64M --no-watch-interactive >/dev/null ||
  { echo "bench/interpose_sync.sh: argus start failed" >&2; exit 1; }
trap '"$argus_bin" stop >/dev/null 2>&1; rm -rf "$tmp"' EXIT
wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true

# sync SETUP ARGS... -> the number before " ns/" ; checks ring=on|off
sync_run() {
  local s=$1 out want
  shift
  case $s in
    bare) out=$(taskset -c 0 "$sync" "$@") want=off ;;
    off) out=$(ARGUS_RUN_DIR=$tmp/none LD_PRELOAD=$lib taskset -c 0 "$sync" "$@") want=off ;;
    on) out=$(LD_PRELOAD=$lib taskset -c 0 "$sync" "$@") want=on ;;
  esac
  grep -qx "ring=$want" <<<"$out" || { echo "bench/interpose_sync.sh: $s $*: expected ring=$want: $out" >&2; return 1; }
  sed -n 's/^\([0-9.]*\) ns\/.*$/\1/p' <<<"$out"
}

for r in $(seq "$rounds"); do
  out=$(taskset -c 0 "$put" "${put_args[@]}") || exit 1
  grep -qx "ring=on" <<<"$out" || { echo "bench/interpose_sync.sh: interpose_put did not register: $out" >&2; exit 1; }
  sed -n 's/^put \([0-9.]*\) ns.*/\1/p' <<<"$out" >>"$tmp/put"
  if grep -q '^uprobe_error=' <<<"$out"; then
    grep '^uprobe_error=' <<<"$out" | head -n 1 >"$tmp/uprobe_error"
  else
    awk '/^call / {c = $2} /^uprobe / {print $2 - c}' <<<"$out" >>"$tmp/uprobe"
  fi
  for s in bare off on; do
    v=$(sync_run $s rdpair "${rd_args[@]}") || exit 1
    echo "$v" >>"$tmp/rd_$s"
    # the contended threads are not pinned: they must run in parallel
    case $s in
      bare) v=$("$sync" contended "${ct_args[@]}" | sed -n 's/^\([0-9.]*\) ns\/op$/\1/p') ;;
      off) v=$(ARGUS_RUN_DIR=$tmp/none LD_PRELOAD=$lib "$sync" contended "${ct_args[@]}" | sed -n 's/^\([0-9.]*\) ns\/op$/\1/p') ;;
      on) o=$(LD_PRELOAD=$lib "$sync" contended "${ct_args[@]}")
          grep -qx ring=on <<<"$o" || { echo "bench/interpose_sync.sh: contended on: not registered" >&2; exit 1; }
          v=$(sed -n 's/^\([0-9.]*\) ns\/op$/\1/p' <<<"$o") ;;
    esac
    [ -n "$v" ] || { echo "bench/interpose_sync.sh: contended $s failed" >&2; exit 1; }
    echo "$v" >>"$tmp/ct_$s"
  done
done

p=$(median <"$tmp/put")
printf '%-34s %10s   (rounds: %s)\n' "one recorded event (aip_put)" "$p ns" "$(paste -sd ' ' "$tmp/put")"
if [ -s "$tmp/uprobe" ]; then
  u=$(median <"$tmp/uprobe")
  printf '%-34s %10s   (rounds: %s)\n' "one uprobe hit" "$u ns" "$(paste -sd ' ' "$tmp/uprobe")"
  printf '%-34s %10s\n' "uprobe hit / recorded event" "$(ratio "$u" "$p")"
else
  echo "one uprobe hit: not measured: $(cat "$tmp/uprobe_error" 2>/dev/null)"
fi
for w in rd ct; do
  [ $w = rd ] && echo "rwlock rdlock+unlock pair, ns/pair:" || echo "contended mutex (4 threads), ns/op:"
  b=$(median <"$tmp/${w}_bare")
  for s in bare off on; do
    m=$(median <"$tmp/${w}_$s")
    printf '  %-6s %10.2f %10s %+10.2f   (rounds: %s)\n' "$s" "$m" "$(ratio "$m" "$b")" \
      "$(awk -v a="$m" -v b="$b" 'BEGIN { print a - b }')" "$(paste -sd ' ' "$tmp/${w}_$s")"
  done
done
