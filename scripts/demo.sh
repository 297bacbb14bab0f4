#!/usr/bin/env bash
# The main job: build Argus, record a short multi-process workload with the
# real collector, and print what was captured.  Needs root (BPF).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "demo.sh: recording loads BPF programs: run as root (sudo $0)" >&2
  exit 1
fi
BUILD_DIR=$top/build bash "$top/scripts/build.sh"
bin=$top/build/bin
apps=$top/build/tests/apps
out=$(mktemp -d /tmp/argus-demo.XXXXXX)
trace=$out/demo.argus

echo "== recording: a pipe ping-pong between two processes, then a timed sleep"
"$bin/argus" record -o "$trace" -- sh -c "'$apps/pipe_pingpong' && '$apps/timed_sleep'" > "$out/app.txt"

echo
echo "== what was captured"
"$bin/argus" dump "$trace" --stats
writer=$(sed -n 's/^PARENT_TID=//p' "$out/app.txt" | head -1)
echo
echo "== the ping-pong's first events (writer tid $writer)"
"$bin/argus" dump "$trace" --tid "$writer" | grep -E 'waking|sys_exit +(read|write)|blocked_in' | head -12
echo
echo "trace kept in $trace; see docs/user-guide.md for what to do with it"
