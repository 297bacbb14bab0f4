#!/usr/bin/env bash
# Builds the Debian package argus_VERSION_amd64.deb (packaging/, CPack's DEB
# generator) from a Release build in its own tree, and prints its path.
#   scripts/package.sh                 # -> build-pkg/argus_VERSION_amd64.deb
#   BUILD_DIR=DIR scripts/package.sh   # another tree (made if missing)
# Install it with `apt-get install ./build-pkg/argus_*.deb` (docs/install.md).
# The package's Depends come from dpkg-shlibdeps (dpkg-dev, which
# scripts/install-deps.sh installs); extra arguments go to cmake's
# configure step.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build-pkg}
command -v dpkg-shlibdeps >/dev/null ||
  { echo "package.sh: no dpkg-shlibdeps: run scripts/install-deps.sh (dpkg-dev)" >&2; exit 1; }
bash "$top/scripts/install-deps.sh"
# /usr: the binaries find each other (and the plugin, in lib/<multiarch>)
# by the relative paths of the install layout, computed at configure time
# CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: cpack builds only what the package
# holds (the targets below), not the tests and benchmarks
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON "$@" >/dev/null
cmake --build "$build" -j"$(nproc)" --target argus argusd argus-pg-holders argus-lldb argus_interpose argus-manpages
rm -f "$build"/argus_*.deb
(cd "$build" && cpack --config CPackConfig.cmake >cpack.log 2>&1) ||
  { echo "package.sh: cpack failed (see $build/cpack.log)" >&2; tail -n 20 "$build/cpack.log" >&2; exit 1; }
ls "$build"/argus_*_amd64.deb
