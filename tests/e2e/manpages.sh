#!/bin/bash
# manpages: the man pages and the bash completion (issue 24 §3), written at
# build time by scripts/gen-manpages.py from the binaries' --help:
#   - `cmake --install` puts argus(1), argus-COMMAND(1) for every command
#     `argus --help` lists, and argusd(8) where man finds them: `man -M DIR
#     argus-diagnose` shows the page, man renders each without a warning;
#   - each page names every option its command's --help names (argusd(8):
#     argusd's), and argus(1) names every command;
#   - the completion, sourced into bash, offers every command after
#     `argus `, and every option of a command after `argus COMMAND --`.
# Needs no root and no BPF.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
command -v man >/dev/null || fail "man (man-db) is needed"

DEST=$T/root
cmake --install "$BUILD" --prefix "$DEST/usr" >"$T/install.log" 2>&1 ||
	fail "cmake --install failed" "$T/install.log"
MAN=$DEST/usr/share/man
COMP=$DEST/usr/share/bash-completion/completions/argus
[ -f "$COMP" ] || fail "no bash completion installed at $COMP" "$T/install.log"

mapfile -t CMDS < <("$ARGUS" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
[ "${#CMDS[@]}" -ge 20 ] || fail "argus --help lists only ${#CMDS[@]} commands: ${CMDS[*]}"
log "${#CMDS[@]} commands: ${CMDS[*]}"

# options named in a help text (--word), one per line
opts_of() { grep -oE '(^|[^a-z0-9-])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }

# man renders PAGE (section S) from $MAN into $T/page.txt, with no warning
render() {
	MANWIDTH=200 man --warnings -M "$MAN" "$1" "$2" >"$T/page.txt" 2>"$T/page.err" ||
		fail "man -M $MAN $1 $2 failed" "$T/page.err"
	[ -s "$T/page.err" ] && fail "man warns on $2($1)" "$T/page.err"
	[ -s "$T/page.txt" ] || fail "man shows nothing for $2($1)"
}

render 1 argus
for c in "${CMDS[@]}"; do
	grep -q "argus-$c(1)" "$T/page.txt" || fail "argus(1) does not list argus-$c(1)" "$T/page.txt"
done
for c in "${CMDS[@]}"; do
	render 1 "argus-$c"
	grep -q "^NAME" "$T/page.txt" && grep -q "argus-$c - " "$T/page.txt" ||
		fail "argus-$c(1) has no NAME line" "$T/page.txt"
	"$ARGUS" "$c" --help 2>&1 | opts_of >"$T/opts"
	while read -r o; do
		[ "$o" = --help ] && continue
		grep -qF -- "$o" "$T/page.txt" || fail "argus-$c(1) does not name $o (argus $c --help does)" "$T/page.txt"
	done <"$T/opts"
done
render 8 argusd
"$BUILD/bin/argusd" --help 2>&1 | opts_of >"$T/dopts"
[ -s "$T/dopts" ] || fail "argusd --help names no option"
while read -r o; do
	grep -qF -- "$o" "$T/page.txt" || fail "argusd(8) does not name $o" "$T/page.txt"
done <"$T/dopts"
log "pages: argus(1), ${#CMDS[@]} argus-COMMAND(1), argusd(8); each names its options"

# completion: what bash offers for COMP_WORDS=(WORDS...), the cursor on the last
complete_words() {
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _argus
		 printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$@"
}
complete_words argus "" >"$T/top"
for c in "${CMDS[@]}"; do
	grep -qx -- "$c" "$T/top" || fail "completing \`argus \` does not offer $c" "$T/top"
done
complete_words argus di >"$T/di"
grep -qx diagnose "$T/di" && grep -qx diff "$T/di" && ! grep -qx dump "$T/di" ||
	fail "completing \`argus di\` should offer diagnose and diff only" "$T/di"
for c in "${CMDS[@]}"; do
	complete_words argus "$c" -- >"$T/copts"
	"$ARGUS" "$c" --help 2>&1 | opts_of >"$T/opts"
	while read -r o; do
		grep -qx -- "$o" "$T/copts" || fail "completing \`argus $c --\` does not offer $o" "$T/copts"
	done <"$T/opts"
done
complete_words argus diagnose --unt >"$T/unt"
[ "$(cat "$T/unt")" = "--until-end" ] || fail "completing \`argus diagnose --unt\`: $(cat "$T/unt")"
pass "man pages and completion: every command and option, from --help"
