#!/bin/bash
# e2e: the installed Argus and the plugin's refusal of another LLDB.
#   1. `cmake --install BUILD --prefix P` puts argus and argusd in P/bin and
#      libargus-lldb.so in P's lib dir; the installed argus starts the
#      installed argusd (found beside it), `argus lldb-init --print` names
#      the installed plugin, and lldb-16 loads that plugin and runs
#      `argus status` against the collector;
#   2. a real lldb-14 (unpacked by scripts/install-deps.sh into
#      /var/cache/argus/lldb-14, as it cannot be installed beside lldb-16)
#      refuses the plugin with a message naming both versions, fails the
#      batch run, and does not crash.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
. "$(dirname "$0")/lldb_lib.sh"
lldb_require

# -- 1. the install -----------------------------------------------------------
P=$T/prefix
cmake --install "$BUILD" --prefix "$P" >"$T/install.out" 2>&1 || fail "cmake --install failed" "$T/install.out"
for f in bin/argus bin/argusd; do
	[ -x "$P/$f" ] || fail "cmake --install did not install $f" "$T/install.out"
done
IPLUGIN=$(find "$P" -name libargus-lldb.so | head -n 1)
[ -n "$IPLUGIN" ] || fail "cmake --install did not install libargus-lldb.so" "$T/install.out"
log "installed: $(cd "$P" && find . -type f | sort | tr '\n' ' ')"

"$P/bin/argus" lldb-init --print >"$T/print.out" 2>&1 || fail "installed argus lldb-init --print failed" "$T/print.out"
expect_in "$T/print.out" "^plugin load $(realpath "$IPLUGIN")\$" "lldb-init --print does not name the installed plugin"

ARGUS=$P/bin/argus start_collector --dir "$T/ring" --size 64M
pid=$(collector_pid)
[ "$(readlink "/proc/$pid/exe")" = "$(realpath "$P/bin/argusd")" ] ||
	fail "the installed argus did not start the installed argusd (it runs $(readlink "/proc/$pid/exe"))"
lldb_run installed -o "plugin load $IPLUGIN" -o "argus status"
lldb_no_crash
[ "$LLDB_RC" -eq 0 ] || fail "the installed plugin's argus status failed" "$LLDB_OUT"
expect_in "$LLDB_OUT" "^collector +pid $pid, up " "argus status in lldb does not show the collector"

# -- 2. another LLDB version ---------------------------------------------------
L14=${ARGUS_LLDB14_DIR:-/var/cache/argus/lldb-14}
[ -x "$L14/usr/lib/llvm-14/bin/lldb" ] || fail "no lldb-14 in $L14: run scripts/install-deps.sh"
LD_LIBRARY_PATH=$L14/usr/lib/x86_64-linux-gnu timeout -k 5 60 "$L14/usr/lib/llvm-14/bin/lldb" -b \
	-o "version" -o "plugin load $PLUGIN" -o "help argus" >"$T/lldb14.lldb" 2>&1 </dev/null
LLDB_RC=$?
LLDB_OUT=$T/lldb14.lldb
log "lldb-14: exit $LLDB_RC"
expect_in "$LLDB_OUT" "^lldb version 14\\." "the lldb under test is not LLDB 14"
lldb_no_crash
[ "$LLDB_RC" -ne 0 ] || fail "lldb-14 loaded the plugin, or did not fail the batch run" "$LLDB_OUT"
expect_in "$LLDB_OUT" "^argus: refusing to load: this plugin is built for LLDB 16, but this debugger is lldb version 14\\." \
	"no clear refusal of LLDB 14"
grep -q '^(lldb) help argus' "$LLDB_OUT" && fail "lldb-14 went on after the refused load" "$LLDB_OUT"
log "lldb-14: $(grep '^argus: refusing' "$LLDB_OUT" | cut -c1-160)"
pass "installed argus/argusd/plugin work together; LLDB 14 is refused with a clear message, no crash"
