#!/bin/bash
# front_ends: every front end reaches the analysis through one session
# (analysis/argus_session.h; issue 21 §1, docs/design.md "One analysis
# session"), checked on the source tree and the built plugin:
#   - lldb-plugin/ includes no header of cli/;
#   - libargus-lldb.so holds no code of the CLI (argus_cli_main, cmd_*);
#   - collector/hang_keep.c runs no program (no exec*): the keeper calls the
#     session argusd hands it;
#   - one function chooses the hang (argus_diag__choose_hang), and no
#     front end has a choose_hang of its own;
#   - only graphlib/graph_*.c include graph_internal.h.
# Needs no root and no BPF: it reads files.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

for h in "$SRC"/cli/*.h; do
	name=$(basename "$h")
	if grep -n "#include \"$name\"" "$SRC"/lldb-plugin/* >"$T/inc"; then
		fail "lldb-plugin/ includes cli/$name" "$T/inc"
	fi
done

SO=$BUILD/lib/libargus-lldb.so
if [ -f "$SO" ]; then
	nm "$SO" >"$T/syms"   # whole, then read: grep -q would cut nm's pipe
	grep -E ' (argus_cli_main|cmd_[a-z_]+)$' "$T/syms" >"$T/cli_syms" &&
		fail "the plugin links code of the CLI" "$T/cli_syms"
	grep -q ' argus_session__diagnose$' "$T/syms" ||
		fail "the plugin does not hold the analysis session (argus_session__diagnose)"
else
	log "no $SO (a sanitizer build has no plugin): its symbols are not checked"
fi

grep -nE '\bexec(l|lp|le|v|vp|vpe|ve|veat)\(|posix_spawn' "$SRC/collector/hang_keep.c" >"$T/exec" &&
	fail "collector/hang_keep.c runs a program" "$T/exec"

grep -rnE '^[a-z].*\bargus_diag__choose_hang\(' "$SRC"/graphlib/*.c >"$T/def"
[ "$(wc -l <"$T/def")" -eq 1 ] || fail "argus_diag__choose_hang is not defined exactly once" "$T/def"
grep -rn 'choose_hang' "$SRC"/lldb-plugin "$SRC"/cli "$SRC"/collector "$SRC"/analysis |
	grep -v 'argus_diag__choose_hang' >"$T/own" &&
	fail "a front end has a choice of the hang of its own" "$T/own"

# the graph's storage is read by its own files only (graph_internal.h):
# the diagnosis and everyone else go through argus_graph.h / graph_view.h
grep -rln '#include "graph_internal.h"' "$SRC" --include='*.c' --include='*.h' --include='*.cpp' |
	grep -v -E "^$SRC/graphlib/graph_[a-z_]+\.(c|h)\$" | grep -v -E "^$SRC/build" >"$T/storage" &&
	fail "files outside graphlib/graph_*.c read the graph's storage" "$T/storage"
pass "front ends: the plugin includes and links no CLI code, the keeper runs no program, one function chooses the hang, only the graph reads its storage"
