#!/usr/bin/env bash
# Builds Argus and runs every test: the normal build's full suite (unit and
# end-to-end tests with real BPF programs in the running kernel), the unit
# tests again under ASan+UBSan, and a time-bounded libFuzzer run of the
# trace reader.  Needs root (the end-to-end tests load BPF programs).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "test.sh: the end-to-end tests load BPF programs: run as root (a root shell, or sudo $0 where sudo exists)" >&2
  exit 1
fi

echo "== build (RelWithDebInfo)"
BUILD_DIR=$top/build bash "$top/scripts/build.sh" -DARGUS_WERROR=ON

echo "== sanitizer build (ASan+UBSan)"
BUILD_DIR=$top/build-asan bash "$top/scripts/build.sh" -DARGUS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DARGUS_WERROR=ON

echo "== fuzz build (clang, libFuzzer)"
BUILD_DIR=$top/build-fuzz bash "$top/scripts/build.sh" -DARGUS_FUZZ=ON -DARGUS_WERROR=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++

status=0
echo "== every test under ASan+UBSan"
(cd "$top/build-asan" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure) || status=1
echo "== fuzzing the readers (tests/fuzz: trace 60 s; schema, step recording and ELF/unwind path 30 s each)"
(cd "$top/build-fuzz" && ctest --output-on-failure -R "^fuzz_") || status=1
echo "== full suite"
(cd "$top/build" && ctest --output-on-failure) || status=1
exit $status
