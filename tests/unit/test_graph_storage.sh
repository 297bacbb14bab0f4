#!/bin/bash
# test_graph_storage.sh BENCH_GRAPH ARGUS_GEN: the graph is the same
# whether its big arrays took mappings of their own on huge pages
# (graphlib/gvec.h, gbig_malloc) or, those mappings refused under an
# address-space limit (as vm.overcommit_memory=2 would refuse them), grew
# by realloc as before.  On a 2 M-event argus-gen trace (its event array,
# 48 MiB, is past the 8 MiB where a vector moves), compared field by field
# with `bench_graph --digest`; strace shows which path each build took.
set -u -o pipefail
bg=$1 gen=$2
T=$(mktemp -d /tmp/argus-test-graph-storage.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; [ -n "${2:-}" ] && [ -f "$2" ] && tail -20 "$2" >&2; exit 1; }

# The limit below cannot hold a sanitizer's shadow memory (terabytes of
# address space): the comparison needs the plain build.
# (No `grep -q` after a pipe here: under pipefail, grep leaving at the
# first match kills a writer that has more to write with SIGPIPE, and the
# pipeline fails; ldd writes line by line, so that made this check miss
# the ASan build now and then, and the test then failed under strace.)
if ldd "$bg" 2>/dev/null | grep -e libasan -e libtsan >/dev/null; then
	echo "skip: $bg is a sanitizer build; an address-space limit cannot hold its shadow memory"
	exit 77
fi
command -v strace >/dev/null || fail "strace is needed (scripts/install-deps.sh installs it)"
# gvec_map()'s reservation (glibc's thread arenas are MAP_NORESERVE too,
# but PROT_NONE)
own() { grep 'PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE' "$1"; }

"$gen" -o "$T/t.argus" --events 2000000 --ui-hang >/dev/null 2>"$T/gen.err" ||
	fail "argus-gen failed" "$T/gen.err"

strace -f -e trace=mmap -o "$T/st.mapped" "$bg" "$T/t.argus" --digest >"$T/d.mapped" 2>"$T/e.mapped" ||
	fail "bench_graph --digest failed" "$T/e.mapped"
own "$T/st.mapped" | grep -v ENOMEM >/dev/null ||
	fail "no array took a mapping of its own" "$T/st.mapped"

# 4 GiB of address space: room for realloc's arrays (~0.2 GiB here), none
# for a reservation (tens of GiB per array)
prlimit --as=$((4 << 30)) strace -f -e trace=mmap -o "$T/st.realloc" \
	"$bg" "$T/t.argus" --digest >"$T/d.realloc" 2>"$T/e.realloc" ||
	fail "bench_graph --digest failed under the address-space limit" "$T/e.realloc"
own "$T/st.realloc" | grep ENOMEM >/dev/null ||
	fail "the limit refused no mapping: the test proves nothing" "$T/st.realloc"
! own "$T/st.realloc" | grep -v ENOMEM >/dev/null ||
	fail "a mapping was taken under the limit" "$T/st.realloc"

[ "$(grep -c . "$T/d.mapped")" -ge 7 ] || fail "the digest is too short" "$T/d.mapped"
diff "$T/d.mapped" "$T/d.realloc" >"$T/diff" || fail "the graphs differ" "$T/diff"
echo "ok: the same graph on own mappings and on realloc ($(head -1 "$T/d.mapped"))"
