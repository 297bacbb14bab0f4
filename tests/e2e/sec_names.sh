#!/bin/bash
# e2e (security): names another user chose never act on root's terminal.
# nobody runs, under a private collector, a copy of `sleep` at a path
# holding a newline and a whole forged dump line, and a program whose comm
# is terminal escapes (ESC ]0;PWNED BEL ESC [2K) that hangs for 3 s.
# Asserts, on root's `argus dump`, `graph`, `hangs`, `diagnose` and
# `show` of the saved trace (text and --json):
#   no byte a terminal acts on (C0 controls other than newline/tab, DEL)
#   is printed; the forged line never appears as a line of its own; the
#   names do appear, escaped (\x1b]0;PWNED\x07, \n), so they were recorded
#   and shown, not dropped; graph/show --json carry the exact comm, JSON-
#   escaped once (\u001b); and argusd still answers and records.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec_lib.sh"
e2e_init "$@"
sec_init
sec_build evil_names

sec_start
FORGED='            sshd       1/1       [001]  2900.000000001: exec           old_tid=1 comm=sshd file=/root/backdoor'
EVIL="$ATT/x
$FORGED"
as_nobody mkdir -p "$(dirname "$EVIL")" && as_nobody cp /bin/sleep "$EVIL" || fail "nobody cannot copy sleep to a name with a newline"
as_nobody "$EVIL" 0.3 || fail "the copy of sleep with a newline in its path did not run"
as_nobody "$PUBDIR/evil_names" 3 >"$T/evil.out" || fail "evil_names failed"
epid=$(kv PID "$T/evil.out")
sleep 0.5
"$ARGUS" save -o "$T/s.argus" >/dev/null 2>"$T/save.err" || fail "argus save failed" "$T/save.err"
still_recording "the forged names"

# raw_controls FILE: lines with a byte a terminal would act on
raw_controls() { LC_ALL=C grep -n $'[\x01-\x08\x0b-\x1f\x7f]' "$1"; }
check_output() {        # WHAT FILE
	if raw_controls "$2" >"$T/raw.lines"; then
		fail "$1 printed raw control bytes (terminal escapes)" "$T/raw.lines"
	fi
	if LC_ALL=C grep -nE '^ +sshd +1/1 +\[001\]' "$2" >"$T/forged.lines"; then
		fail "$1 printed the forged line as a line of its own" "$T/forged.lines"
	fi
}

"$ARGUS" dump "$T/s.argus" --stacks >"$T/dump" 2>"$T/dump.err" || fail "argus dump failed" "$T/dump.err"
check_output "argus dump" "$T/dump"
LC_ALL=C grep -qF 'file='"$ATT"'/x\n            sshd' "$T/dump" ||
	fail "the exec of the path with a newline is not in the dump, escaped as \\n" "$T/dump"
LC_ALL=C grep -qF '\x1b]0;PWNED\x07\x1b[2K' "$T/dump" ||
	fail "the escape-sequence comm is not in the dump, escaped as \\x1b" "$T/dump"
log "dump: the newline path and the escape comm are shown escaped"

for cmd in "graph --stats" "graph --pid $epid" "hangs --pid $epid" "diagnose --pid $epid" \
	   "diagnose --pid $epid --json"; do
	# shellcheck disable=SC2086
	"$ARGUS" $cmd "$T/s.argus" >"$T/out" 2>&1
	check_output "argus $cmd" "$T/out"
done
"$ARGUS" graph "$T/s.argus" --pid "$epid" >"$T/graph" 2>&1 || fail "argus graph --pid failed" "$T/graph"
LC_ALL=C grep -qF 'segment #' "$T/graph" && LC_ALL=C grep -qF '\x1b]0;PWNED\x07' "$T/graph" ||
	fail "argus graph --pid does not name nobody's thread, escaped" "$T/graph"
seg=$(grep -oE 'segment #[0-9]+' "$T/graph" | head -n 1 | tr -dc 0-9)
"$ARGUS" show "$T/s.argus" "$seg" >"$T/show" 2>&1 || fail "argus show $seg failed" "$T/show"
check_output "argus show $seg" "$T/show"
LC_ALL=C grep -qF '\x1b]0;PWNED\x07' "$T/show" || fail "argus show does not name the thread, escaped" "$T/show"
"$ARGUS" graph "$T/s.argus" --pid "$epid" --json >"$T/graph.json" 2>&1 || fail "graph --json failed" "$T/graph.json"
check_output "argus graph --json" "$T/graph.json"
LC_ALL=C grep -qF '"comm":"\u001b]0;PWNED\u0007\u001b[2K"' "$T/graph.json" ||
	fail "graph --json does not carry the exact comm, JSON-escaped" "$T/graph.json"
"$ARGUS" show "$T/s.argus" "$seg" --json >"$T/show.json" 2>&1 || fail "show --json failed" "$T/show.json"
LC_ALL=C grep -qF '"comm":"\u001b]0;PWNED\u0007\u001b[2K"' "$T/show.json" ||
	fail "show --json does not carry the exact comm (escaped once, by JSON)" "$T/show.json"
log "graph, hangs, diagnose, show (text and JSON): escaped for the terminal, exact in JSON"

pass "comms and paths with escapes and newlines are shown escaped, never raw"
