#!/usr/bin/env bash
# Installs everything Argus needs to build, test and run, from Debian's
# packages.  Idempotent: packages already present are skipped quickly.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang-14 clang llvm
      libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libbsd-dev
      libcapstone-dev lldb-16 liblldb-16-dev
      linux-perf rt-tests elfutils binutils trace-cmd
      xvfb x11-apps x11-utils xdotool)  # the desktop mix of bench/desktop_mix.sh
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to install: ${missing[*]} (run with sudo)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}"
fi
