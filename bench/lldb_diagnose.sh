#!/usr/bin/env bash
# The time from `argus diagnose` typed in lldb to its answer, on a ring
# holding 2 minutes of the desktop mix (issue 21: the goal is under 1 s),
# against the CLI doing the same work at the same moment: `argus save
# --last 2m` plus `argus diagnose FILE --pid VICTIM`.
#
#   bench/lldb_diagnose.sh [BUILD_DIR] [REPS] [FILL_S]
#
# A private collector (a 1 GiB ring in a temp dir) records the desktop mix
# (bench/desktop_workload.sh, run again and again) for FILL_S seconds
# (default 120), which keeps running through the measurement.  Then REPS
# times (default 5): a file-lock hang of real programs (`flock L sleep
# 12` holds L, `flock L true` waits), lldb-16 attached 3 s into it, as a
# user would; lldb prints CLOCK_MONOTONIC stamps just before and after
# `argus diagnose` (plugin already loaded), so lldb's own start-up and
# attach are not counted; right after lldb detaches, the CLI pair runs on
# the same hang.  Each round checks that both name the holder.
# Prints per-round times and the median ratio lldb / CLI.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_init "${1:-}"
reps=${2:-5}
fill=${3:-120}
bench_lldb_mix lldb_diagnose 78 "$fill"

rounds=$tmp/rounds
: >"$rounds"
for r in $(seq "$reps"); do
  : >"$tmp/L"
  flock "$tmp/L" sleep 12 &
  holder=$!
  sleep 0.3
  flock "$tmp/L" true &
  victim=$!
  sleep 3
  timeout 60 lldb-16 -b -p "$victim" -o "plugin load $plugin" \
    -o "script print('T0=' + str(__import__('time').monotonic_ns()))" \
    -o "argus diagnose --json" \
    -o "script print('T1=' + str(__import__('time').monotonic_ns()))" \
    -o "process detach" >"$tmp/lldb.$r" 2>&1
  t0=$(sed -n 's/^T0=//p' "$tmp/lldb.$r"); t1=$(sed -n 's/^T1=//p' "$tmp/lldb.$r")
  lldb_ok=$(grep '^{' "$tmp/lldb.$r" | python3 -c "import json,sys; d=json.loads(sys.stdin.readline()); print(int(d['culprit']['pid']==$holder))" 2>/dev/null || echo 0)
  c0=$(mono)
  "$argus_bin" save --last 2m -o "$tmp/s.$r.argus" >/dev/null 2>&1
  "$argus_bin" diagnose "$tmp/s.$r.argus" --pid "$victim" --json >"$tmp/cli.$r" 2>&1
  c1=$(mono)
  cli_ok=$(python3 -c "import json,sys; d=json.load(open('$tmp/cli.$r')); print(int(d['culprit']['pid']==$holder))" 2>/dev/null || echo 0)
  events=$("$argus_bin" dump "$tmp/s.$r.argus" --stats 2>/dev/null | sed -n 's/^# \([0-9]*\) events.*/\1/p')
  if [ -z "$t0" ] || [ -z "$t1" ]; then
    echo "round $r: lldb gave no time stamps (see below)" >&2; tail -20 "$tmp/lldb.$r" >&2
  else
    echo "$r $(( (t1 - t0) / 1000000 )) $(( (c1 - c0) / 1000000 )) $lldb_ok $cli_ok ${events:-?}" >>"$rounds"
  fi
  wait "$victim" "$holder" 2>/dev/null
done

echo "round  lldb_ms  cli_ms  lldb_right  cli_right  events_in_2m"
awk '{printf "%5d  %7d  %6d  %10d  %9d  %s\n", $1, $2, $3, $4, $5, $6}' "$rounds"
lm=$(awk '{print $2}' "$rounds" | median)
cm=$(awk '{print $3}' "$rounds" | median)
rm_=$(awk '$3 > 0 {print $2 / $3}' "$rounds" | median)
echo "median: lldb argus diagnose ${lm} ms; CLI save+diagnose ${cm} ms; per-round ratio lldb/CLI $(printf '%.2f' "${rm_:-0}")"
echo "ring: $("$argus_bin" status 2>/dev/null | grep -iE 'span|events' | head -2 | tr '\n' ' ')"
