#!/usr/bin/env bash
# One call of a function patched by `argus instrument` against one uprobe
# hit on the same function (issue 14 §3: "uprobes as the fallback, with
# their cost measured here"), in one process, pinned to CPU 0:
#
#   bench/live_hook.sh [BUILD_DIR] [CALLS]
#
# bench/live_hook (build/bin/live_hook) calls live_bench_fn(&item) CALLS
# times (default 2,000,000; the uprobe runs CALLS/20: each hit is a trap)
# per set-up, in this order, best of 3 each:
#   bare     nothing attached
#   count    argus instrument --count-only: jmp, trampoline, lock inc, jmp back
#   hook     argus instrument --as begin: also argus_work_begin(item) in the
#            injected interposer (only when it exports argus_work_*; with a
#            private collector running, so the ring is registered and each
#            call writes a record)
#   ret      argus instrument --as begin --at-return end: the same, plus the
#            return hook (shadow stack, the return stub, argus_work_end:
#            two records per call)
#   uprobe   a uprobe on the same entry (perf_event_open, "uprobe" PMU,
#            counting: the cheapest consumer)
#   via-bpf  argus instrument --via uprobe: the uprobe and its BPF program
#            writing one live_hit record into the collector's ring
# The per-call costs are minus bare; the ratios are uprobe / patched, of the
# same run.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_init "${1:-}"
calls=${2:-2000000}
bin=$build/bin/live_hook
lib=$build/lib/libargus-interpose.so
[ -x "$bin" ] || { echo "bench/live_hook.sh: no $bin (build first)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/live_hook.sh: needs root (ptrace, uprobes, a collector)" >&2; exit 2; }

export ARGUS_RUN_DIR=$tmp/run
mkdir -p "$tmp/ring"
"$argus_bin" start --dir "$tmp/ring" --size 64M --no-watch-interactive >/dev/null ||
  { echo "bench/live_hook.sh: argus start failed" >&2; exit 1; }
mkfifo "$tmp/in"
taskset -c 0 "$bin" <"$tmp/in" >"$tmp/out" &
app=$!
exec 9>"$tmp/in"
trap 'exec 9>&-; kill $app 2>/dev/null; wait $app 2>/dev/null; "$argus_bin" stop >/dev/null 2>&1; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do grep -q READY=1 "$tmp/out" && break; sleep 0.05; done

ask() { # CMD -> the answer line
  local n
  n=$(wc -l <"$tmp/out")
  echo "$1" >&9
  for _ in $(seq 600); do [ "$(wc -l <"$tmp/out")" -gt "$n" ] && break; sleep 0.05; done
  tail -n 1 "$tmp/out"
}
best() { # CMD -> the lowest ns of 3
  for _ in 1 2 3; do ask "$1" | sed -n 's/.* ns=\([0-9.]*\).*/\1/p'; done | sort -g | head -n 1
}
fn=live_bench_fn

wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true
bare=$(best "run $calls")
"$argus_bin" instrument --pid $app --func $fn --as begin --count-only >/dev/null || exit 1
count=$(best "run $calls")
"$argus_bin" instrument --pid $app --func $fn --remove >/dev/null || exit 1
hook=n/a
retn=n/a
if nm -D --defined-only "$lib" | grep ' argus_work_begin$' >/dev/null; then  # not -q: pipefail
  "$argus_bin" instrument --pid $app --func $fn --as begin --lib "$lib" >/dev/null || exit 1
  hook=$(best "run $calls")
  "$argus_bin" instrument --pid $app --func $fn --remove >/dev/null || exit 1
fi
if nm -D --defined-only "$lib" | grep ' argus_live_ret_enter$' >/dev/null; then
  "$argus_bin" instrument --pid $app --func $fn --as begin --at-return end --lib "$lib" >/dev/null || exit 1
  retn=$(best "run $calls")
  "$argus_bin" instrument --pid $app --func $fn --remove >/dev/null || exit 1
fi
# argus instrument --via uprobe: the uprobe plus its BPF program writing a
# live_hit record into the collector's ring
"$argus_bin" instrument --pid $app --func $fn --as begin --via uprobe >/dev/null || exit 1
viabpf=$(best "run $((calls / 20))")
"$argus_bin" instrument --pid $app --func $fn --remove --via uprobe >/dev/null || exit 1
up=$(ask "uprobe $((calls / 20))")
case $up in *error=*) echo "bench/live_hook.sh: $up" >&2; exit 1 ;; esac
upns=$(for _ in 1 2 3; do ask "uprobe $((calls / 20))" | sed -n 's/.* ns=\([0-9.]*\).*/\1/p'; done | sort -g | head -n 1)
sub() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/) printf "%.1f", a - b; else print "n/a" }'; }
printf 'calls %s (uprobe %s), ns per call, best of 3, pinned to CPU 0\n' "$calls" "$((calls / 20))"
printf '%-8s %10s %12s\n' setup ns/call "minus bare"
printf '%-8s %10s %12s\n' bare "$bare" -
printf '%-8s %10s %12s\n' count "$count" "$(sub "$count" "$bare")"
printf '%-8s %10s %12s\n' hook "$hook" "$(sub "$hook" "$bare")"
printf '%-8s %10s %12s\n' ret "$retn" "$(sub "$retn" "$bare")"
printf '%-8s %10s %12s\n' uprobe "$upns" "$(sub "$upns" "$bare")"
printf '%-8s %10s %12s\n' via-bpf "$viabpf" "$(sub "$viabpf" "$bare")"
hr=n/a
[ "$hook" != n/a ] && hr=$(ratio "$(sub "$upns" "$bare")" "$(sub "$hook" "$bare")")
printf 'uprobe / count: %s   uprobe / hook: %s\n' "$(ratio "$(sub "$upns" "$bare")" "$(sub "$count" "$bare")")" "$hr"
