#!/usr/bin/env bash
# `argus diagnose --until-end`: the time from the hang's end to the answer,
# in lldb (the process kept stopped: the end is the lock's release) and in
# the CLI (the victim runs: the end is its wait returning), on a ring
# holding 2 minutes of the desktop mix, as bench/lldb_diagnose.sh.
#
#   bench/until_end.sh [BUILD_DIR] [REPS] [FILL_S]
#
# A private collector (a 1 GiB ring in a temp dir) records the desktop mix
# (bench/desktop_workload.sh, run again and again) for FILL_S seconds
# (default 120), which keeps running through the measurement.  Then REPS
# times (default 5), each round two file-lock hangs of real programs
# (`flock L sleep 8` holds L, `flock L true` waits; the shell that ran the
# holder stamps the wall clock as soon as it exits, i.e. when the lock is
# released):
#   lldb  lldb-16 attached 3 s into the hang, plugin loaded, runs `argus
#         diagnose --until-end=30 --json`, then stamps the wall clock
#         (`script`); the time is that stamp minus the release's;
#   CLI   3 s into the next hang, `argus diagnose --pid VICTIM
#         --until-end=30 --json`; the time is its return minus the release.
# Each answer must say the hang ended and name the holder.
# Prints per-round times and the medians.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_init "${1:-}"
reps=${2:-5}
fill=${3:-120}
bench_lldb_mix until_end 79 "$fill"

# hang NAME: the holder's shell in the background (its exit stamp goes to
# $tmp/NAME.end), the victim's pid in $victim, the holder's in $holder.
hang() {
  local name=$1 end=$((SECONDS + 10))
  : >"$tmp/L.$name"
  rm -f "$tmp/$name.end"
  bash -c 'flock "$0" sleep 8; date +%s%N >"$1"' "$tmp/L.$name" "$tmp/$name.end" &
  hshell=$!
  until holder=$(pgrep -P "$hshell" -x flock); do
    [ $SECONDS -lt $end ] || { echo "until_end: no holder" >&2; return 1; }
    sleep 0.02
  done
  sleep 0.3
  flock "$tmp/L.$name" true &
  victim=$!
}

# ok JSON HOLDER: 1 when the answer says the hang ended and names the holder
ok() {
  python3 -c "
import json, sys
d = json.loads(open(sys.argv[1]).readline())
u = d.get('until_end') or {}
print(int(u.get('ended') is True and u.get('ongoing') is True and d['culprit']['pid'] == int(sys.argv[2])))" "$1" "$2" 2>/dev/null || echo 0
}

# the release stamp, waiting up to 3 s for the holder's shell to write it
release_at() {
  for _ in $(seq 60); do [ -s "$1" ] && { cat "$1"; return; }; sleep 0.05; done
  echo 0
}

rounds=$tmp/rounds
: >"$rounds"
for r in $(seq "$reps"); do
  hang lldb.$r || continue
  sleep 3
  timeout 60 lldb-16 -b -p "$victim" -o "plugin load $plugin" \
    -o "argus diagnose --until-end=30 --json" \
    -o "script print('T1=' + str(__import__('time').time_ns()))" \
    -o "process detach" >"$tmp/lldb.$r" 2>&1
  t1=$(sed -n 's/^T1=//p' "$tmp/lldb.$r")
  grep '^{"hang"' "$tmp/lldb.$r" >"$tmp/lldb.$r.json"
  lldb_ok=$(ok "$tmp/lldb.$r.json" "$holder")
  rel=$(release_at "$tmp/lldb.$r.end")
  lldb_ms=$(( (${t1:-0} - rel) / 1000000 ))
  wait "$victim" "$hshell" 2>/dev/null

  hang cli.$r || continue
  sleep 3
  "$argus_bin" diagnose --pid "$victim" --until-end=30 --json >"$tmp/cli.$r.json" 2>"$tmp/cli.$r.err"
  c1=$(date +%s%N)
  cli_ok=$(ok "$tmp/cli.$r.json" "$holder")
  rel=$(release_at "$tmp/cli.$r.end")
  cli_ms=$(( (c1 - rel) / 1000000 ))
  wait "$victim" "$hshell" 2>/dev/null
  if [ -z "$t1" ]; then
    echo "round $r: lldb gave no time stamp (see below)" >&2; tail -20 "$tmp/lldb.$r" >&2
  else
    echo "$r $lldb_ms $cli_ms $lldb_ok $cli_ok" >>"$rounds"
  fi
done

echo "round  lldb_ms  cli_ms  lldb_right  cli_right   (from the lock's release to the answer)"
awk '{printf "%5d  %7d  %6d  %10d  %9d\n", $1, $2, $3, $4, $5}' "$rounds"
echo "median: lldb $(awk '{print $2}' "$rounds" | median) ms; CLI $(awk '{print $3}' "$rounds" | median) ms"
echo "ring: $("$argus_bin" status 2>/dev/null | grep -iE 'span|events' | head -2 | tr '\n' ' ')"
