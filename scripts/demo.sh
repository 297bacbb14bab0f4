#!/usr/bin/env bash
# The main job: build Argus, record the paper's first case study (a circular
# wait between a "browser", its IME worker and a "renderer", broken only by a
# 1.5 s timeout) with the real collector, and print the diagnosis.
# Needs root (BPF).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "demo.sh: recording loads BPF programs: run as root (a root shell, or sudo $0 where sudo exists)" >&2
  exit 1
fi
BUILD_DIR=$top/build bash "$top/scripts/build.sh"
bin=$top/build/bin
apps=$top/build/tests/apps
out=$(mktemp -d /tmp/argus-demo.XXXXXX)
trace=$out/circular.argus

echo "== recording tests/apps/case_circular: keystrokes, then one that hangs the browser"
# --wait-stacks: the stacks of blocked threads are DWARF-unwound too, so
# the culprits' waits show the app's functions, not just libc's read()
"$bin/argus" record --wait-stacks -o "$trace" -- "$apps/case_circular" > "$out/app.txt"
ui=$(sed -n 's/^UI_PID=//p' "$out/app.txt" | head -1)

echo
echo "== the graph"
"$bin/argus" graph "$trace" --stats | sed -n '1,6p'
echo
echo "== the hangs of the browser (pid $ui)"
"$bin/argus" hangs "$trace" --pid "$ui"
echo
echo "== argus diagnose $trace --pid $ui"
"$bin/argus" diagnose "$trace" --pid "$ui" </dev/null
echo
echo "== the app's own ground truth"
grep -E '^(CULPRIT_COMM|CULPRIT_TID|CHAIN|CYCLE|TIMEOUT_MS)=' "$out/app.txt"
echo
echo "trace kept in $trace; docs/diagnosis.md explains each line"
