#!/bin/bash
# e2e: long work shows progress on a terminal and nowhere else (issue 15 §2).
#
# A generated trace of 16 M events (argus-gen --ui-hang: a graph build of
# a few seconds here, well past the helper's one-second delay) is read by
# `argus graph --stats`, `argus diagnose` and `argus report`:
#   - under a pty (script(1): stderr is a terminal) the progress line
#     "building the graph: NN% [###...]" appears, and is erased at the end
#     (ESC [K), so the command's own output follows on a clean line;
#   - with stderr to a pipe, the same commands print no progress at all
#     (no "building the graph", no carriage return), and their stdout is
#     the same as on the terminal.
# And a small trace (a case app, built in milliseconds) shows nothing even
# on the pty: the helper waits a second before drawing.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
command -v script >/dev/null || fail "script(1) is needed (util-linux)"
GEN=$BUILD/bin/argus-gen
[ -x "$GEN" ] || fail "no $GEN (build first)"

"$GEN" -o "$T/big.argus" --events 16000000 --ui-hang >"$T/gen.out" 2>"$T/gen.err" ||
	fail "argus-gen exited $?" "$T/gen.err"
OUT=$T/gen.out
UI=$(kv UI_PID)
log "generated: $(tail -c 200 "$T/gen.err")"

# on_pty NAME CMD...: CMD with stdin/stdout/stderr on a pty; all of it in $T/NAME.pty
on_pty() {
	local name=$1 cmd
	shift
	printf -v cmd '%q ' "$@"
	timeout -k 5 120 script -qfec "$cmd" /dev/null >"$T/$name.pty" </dev/null ||
		fail "$* on a pty exited $?" "$T/$name.pty"
}
# on_pipe NAME CMD...: stdout to $T/NAME.stdout, stderr through a pipe to $T/NAME.stderr
on_pipe() {
	local name=$1
	shift
	{ timeout -k 5 120 "$@" 2>&1 1>"$T/$name.stdout" | cat >"$T/$name.stderr"; } ||
		fail "$* with stderr to a pipe exited non-zero" "$T/$name.stderr"
}

for c in graph diagnose report; do
	case $c in
	graph) args=("$ARGUS" graph "$T/big.argus" --stats) ;;
	diagnose) args=("$ARGUS" diagnose "$T/big.argus" --pid "$UI") ;;
	report) rm -f "$T/tty.html" "$T/pipe.html"; args=("$ARGUS" report "$T/big.argus" --pid "$UI" -o "$T/tty.html") ;;
	esac
	on_pty "$c" "${args[@]}"
	grep -aq 'building the graph: *[0-9]*% \[#' "$T/$c.pty" ||
		fail "argus $c on a terminal showed no progress" "$T/$c.pty"
	grep -aq $'\033\\[K' "$T/$c.pty" || fail "argus $c did not erase its progress line" "$T/$c.pty"
	log "$c on a pty: $(grep -ao 'building the graph: *[0-9]*%' "$T/$c.pty" | tr '\n' ' ')"
	[ $c = report ] && args=("$ARGUS" report "$T/big.argus" --pid "$UI" -o "$T/pipe.html")
	on_pipe "$c" "${args[@]}"
	if grep -aq 'building the graph' "$T/$c.stderr" || grep -aq $'\r' "$T/$c.stderr"; then
		fail "argus $c with stderr to a pipe printed progress" "$T/$c.stderr"
	fi
	# the same result either way (the pty's lines end in CRLF, its
	# progress is erased with ESC [K; the build's own timing differs)
	if [ $c != report ]; then
		sed 's/\r$//' "$T/$c.pty" | sed 's/.*\x1b\[K//' | grep -v '^build:' >"$T/$c.pty.txt"
		grep -v '^build:' "$T/$c.stdout" >"$T/$c.stdout.txt"
		diff -q "$T/$c.pty.txt" "$T/$c.stdout.txt" >/dev/null ||
			{ diff "$T/$c.pty.txt" "$T/$c.stdout.txt" >"$T/$c.diff"; fail "argus $c printed something else on the pty" "$T/$c.diff"; }
	fi
	log "$c with stderr to a pipe: no progress ($(wc -c <"$T/$c.stderr") bytes of stderr)"
done

# a quick run stays silent, even on a terminal
record small -- "$APPS/pipe_pingpong"
on_pty small "$ARGUS" graph "$TRACE" --stats
grep -aq 'building the graph' "$T/small.pty" && fail "a build of a few ms showed progress" "$T/small.pty"
pass "progress on a pty for graph, diagnose and report of 16 M events, none on a pipe, none for a quick run"
