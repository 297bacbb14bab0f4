#!/usr/bin/env bash
# Installs everything Argus needs to build, test and run, from Debian's
# packages.  Idempotent: packages already present are skipped quickly.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang-14 clang llvm
      libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libzstd-dev libdeflate-dev libbsd-dev
      libcapstone-dev libmnl-dev lldb-16 liblldb-16-dev
      python3-lldb-16   # `import lldb`: scripts/argus_flag.py, tests/e2e/python_flag.sh
      linux-perf rt-tests elfutils binutils trace-cmd
      strace   # who parses what: tests/e2e/sec_cli_symbolizer.sh
      dpkg-dev   # dpkg-shlibdeps: the .deb's Depends (scripts/package.sh, tests/e2e/package.sh)
      systemd    # systemd-analyze verify of packaging/argus.service (tests/e2e/package.sh); not booted
      xvfb x11-apps x11-utils xdotool   # the desktop mix of bench/desktop_mix.sh
      # real programs: tests/e2e/lock_records.sh and tests/e2e/real_*.sh
      util-linux postgresql-15 sqlite3 dbus python3-dbus python3-gi curl
      libglib2.0-dev libglib2.0-bin   # GLib work items: tests/apps/glib_pool.c, tests/e2e/interpose_glib*.sh
      chromium)   # renders `argus report`'s page headless: tests/e2e/report_html.sh
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to install: ${missing[*]} (run as root)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}"
fi

# A second LLDB, only for the test that the plugin refuses to load into
# another LLDB version (tests/e2e/lldb_install.sh).  lldb-14 cannot be
# installed beside lldb-16 (their python3-lldb packages conflict, and apt
# would remove lldb-16), so its two .debs are unpacked into a private dir.
LLDB14_DIR=${ARGUS_LLDB14_DIR:-/var/cache/argus/lldb-14}
if [ ! -x "$LLDB14_DIR/usr/lib/llvm-14/bin/lldb" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to unpack lldb-14 into $LLDB14_DIR (run as root)" >&2
    exit 1
  fi
  tmp=$(mktemp -d)
  chmod 755 "$tmp"
  chown _apt "$tmp" 2>/dev/null || true   # apt downloads as _apt when it can
  ( cd "$tmp" && apt-get download -qq lldb-14 liblldb-14 ) || { apt-get update -qq && ( cd "$tmp" && apt-get download -qq lldb-14 liblldb-14 ); }
  mkdir -p "$LLDB14_DIR.new"
  for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$LLDB14_DIR.new"; done
  rm -rf "$tmp" "$LLDB14_DIR"
  mv "$LLDB14_DIR.new" "$LLDB14_DIR"
fi
