# real_lib.sh - what the real-program tests (tests/e2e/real_*.sh) share;
# sourced after lib.sh and e2e_init.
#
# Each real_* test puts a hang between real programs from Debian packages
# (util-linux flock, postgres + psql, dbus-daemon + dbus-send, curl +
# python3's http.server, sqlite3, ...) and checks Argus against ground
# truth that does not come from Argus: /proc/locks, pg_locks, the programs'
# own logs, and timestamps the harness takes.
#
# The shape of a test:
#   1. a harness script ($T/harness.sh HOLD_S GT_FILE) makes the hang and
#      writes its ground truth as KEY=VALUE lines into GT_FILE:
#        VICTIM_PID   the process that hangs (its main thread is the victim)
#        CULPRIT_PID  CULPRIT_COMM [CULPRIT_TID]   who must be blamed
#        CHAIN        comma-separated pids the chain must start with (may be empty)
#        IN_WAIT_NS   CLOCK_MONOTONIC ns when the harness saw the victim waiting
#        DONE_NS      CLOCK_MONOTONIC ns when the victim had returned
#        READY=1      (the last line before the hang ends: the live phase
#                      attaches lldb once it is there)
#      and lists every pid it starts in GT_FILE.pids (reaped on exit);
#   2. `argus record` of the harness, then real_check_diagnose (plain
#      `argus diagnose FILE --pid VICTIM --json`, no time) and
#      real_check_hangs (`argus hangs FILE --json`, no --pid: the victim's
#      hang among the 5 longest);
#   3. the harness again under a private collector; while the victim is
#      hung, lldb-16 attaches, loads the plugin and runs
#      `argus diagnose --json`: the same culprit (real_check_live).
#
# A failed check does not stop the test: every check runs and the test
# fails at the end (real_finish) with all of them, which tells more than
# the first one alone.  REAL_KEEP_TRACES=DIR copies the recorded trace
# and its ground truth to DIR/NAME.argus and DIR/NAME.txt when a check
# failed (for the diagnosis developers to iterate on offline).

REAL_FAILS=()
REAL_CLEANUP=()   # shell commands run on exit, before lib.sh's cleanup

# mono: CLOCK_MONOTONIC in ns, the clock of the trace (bash has none).
mono() { /usr/bin/python3 -c 'import time; print(time.monotonic_ns())'; }

real_reap() {
	local f pid c
	for c in "${REAL_CLEANUP[@]}"; do eval "$c" >/dev/null 2>&1 || true; done
	for f in "$T"/*.pids; do
		[ -f "$f" ] || continue
		while read -r pid; do
			[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
		done <"$f"
	done
	return 0
}
# (lib.sh's e2e_cleanup reads the exit status from $?: hand it on)
trap 'real_rc=$?; real_reap; (exit $real_rc); e2e_cleanup' EXIT

# soft MESSAGE: a failed check, reported now, failing the test at the end.
soft() {
	printf '[%s] FAIL: %s\n' "$E2E_NAME" "$1" >&2
	REAL_FAILS+=("$1")
}

# gt KEY FILE: the value of KEY in a ground-truth file (empty if absent).
gt() { sed -n "s/^$1=//p" "$2" | tail -n 1; }

# real_run_harness NAME HOLD_S: `argus record` of the harness; GT=$T/NAME.gt.
real_run_harness() {
	local name=$1 hold=$2
	GT=$T/$name.gt
	: >"$GT"
	record "$name" -- bash "$T/harness.sh" "$hold" "$GT"
	grep -q '^READY=1' "$GT" || fail "the harness never saw the hang (ground truth below)" "$GT"
	[ -n "$(gt DONE_NS "$GT")" ] || fail "the harness did not see the victim return" "$GT"
	log "ground truth: $(grep -v '^READY' "$GT" | tr '\n' ' ')"
}

# The JSON checker: python3 CHECK WHAT JSON GT [FIELDS]
real_write_checker() {
	cat >"$T/check.py" <<'PY'
import json, sys
what, jfile, gfile = sys.argv[1], sys.argv[2], sys.argv[3]
g = {}
for line in open(gfile):
    if "=" in line:
        k, v = line.rstrip("\n").split("=", 1)
        g[k] = v
bad = []
def check(cond, msg):
    print(("  ok:   " if cond else "  FAIL: ") + msg, file=sys.stderr)
    if not cond:
        bad.append(msg)
try:
    d = json.load(open(jfile))
except Exception as e:
    print(f"  FAIL: no JSON object: {e}", file=sys.stderr)
    sys.exit(1)
victim = int(g["VICTIM_PID"])
if what in ("diagnose", "live"):
    h = d.get("hang") or {}
    check(h.get("pid") == victim, f"the hang is the victim's: hang pid {h.get('pid')} == {victim}")
    if what == "diagnose":
        s, e = int(g["IN_WAIT_NS"]), int(g["DONE_NS"])
        check(h.get("start_ns", 1 << 63) < e and h.get("end_ns", 0) > s,
              f"hang {h.get('start_ns')}..{h.get('end_ns')} overlaps the harness's {s}..{e}")
    c = d.get("culprit")
    check(c is not None, "a culprit is named")
    if c:
        want = int(g["CULPRIT_PID"])
        check(c.get("pid") == want and c.get("comm") == g["CULPRIT_COMM"],
              f"culprit {c.get('comm')} pid {c.get('pid')} tid {c.get('tid')} == "
              f"{g['CULPRIT_COMM']} pid {want}")
        if g.get("CULPRIT_TID"):
            check(c.get("tid") == int(g["CULPRIT_TID"]),
                  f"culprit tid {c.get('tid')} == {g['CULPRIT_TID']}")
        check(isinstance(c.get("rule"), str) and c.get("rule") != "",
              f"the culprit says which rule named it: rule={c.get('rule')!r}")
        if what == "diagnose":
            want_chain = [int(p) for p in g.get("CHAIN", "").split(",") if p]
            got = [x.get("pid") for x in d.get("chain") or []]
            check(got[:len(want_chain)] == want_chain,
                  f"chain pids {got} start with {want_chain} "
                  f"({[(x.get('comm'), x.get('rule')) for x in d.get('chain') or []]})")
    print(f"  verdict: {d.get('verdict')}", file=sys.stderr)
elif what == "hangs":
    hs = d.get("hangs") or []
    durs = [x.get("duration_ns", 0) for x in hs]
    check(durs == sorted(durs, reverse=True), "the listing is longest first")
    check(all("kind" in x for x in hs), "every hang has a kind")
    top = hs[:5]
    s, e = int(g["IN_WAIT_NS"]), int(g["DONE_NS"])
    mine = [x for x in top if x.get("pid") == victim
            and x.get("start_ns", 1 << 63) < e and x.get("end_ns", 0) > s]
    check(bool(mine), f"the victim {victim}'s hang (around {s}..{e}) is among the 5 longest of "
          f"{len(hs)}: {[(x.get('comm'), x.get('pid'), x.get('duration_ns', 0) // 1000000) for x in top]}")
sys.exit(1 if bad else 0)
PY
}

# real_check_diagnose TRACE GT: plain `argus diagnose TRACE --pid VICTIM --json`.
real_check_diagnose() {
	local trace=$1 g=$2 v
	v=$(gt VICTIM_PID "$g")
	[ -f "$T/check.py" ] || real_write_checker
	"$ARGUS" diagnose "$trace" --pid "$v" --json >"$T/d.json" 2>"$T/d.err"
	local rc=$?
	"$ARGUS" diagnose "$trace" --pid "$v" >"$T/d.txt" 2>&1 </dev/null
	log "argus diagnose --pid $v: exit $rc"
	sed 's/^/    /' "$T/d.txt" | head -n 40 >&2
	if [ $rc -ne 0 ]; then
		soft "argus diagnose $trace --pid $v --json exited $rc: $(head -n 1 "$T/d.err" | head -c 300)"
		return
	fi
	/usr/bin/python3 "$T/check.py" diagnose "$T/d.json" "$g" ||
		soft "argus diagnose --pid $v does not match the ground truth"
}

# real_check_hangs TRACE GT: `argus hangs TRACE --json` (no --pid).
real_check_hangs() {
	local trace=$1 g=$2
	[ -f "$T/check.py" ] || real_write_checker
	"$ARGUS" hangs "$trace" --json >"$T/h.json" 2>"$T/h.err"
	local rc=$?
	log "argus hangs (no --pid): exit $rc"
	if [ $rc -ne 0 ]; then
		soft "argus hangs $trace --json (no --pid) exited $rc: $(head -n 1 "$T/h.err" | head -c 300)"
		return
	fi
	/usr/bin/python3 "$T/check.py" hangs "$T/h.json" "$g" ||
		soft "argus hangs without --pid does not list the victim's hang among the longest"
}

# real_live HOLD_S: the harness again, under a private collector, in the
# background; once it says READY, lldb-16 attaches to the victim, loads
# the plugin and runs `argus diagnose --json`; then detaches and the
# harness runs to its end.  Checks the same culprit as the harness names.
real_live() {
	local hold=$1 g=$T/live.gt hp end
	. "$(dirname "$0")/lldb_lib.sh"
	lldb_require
	[ -f "$T/check.py" ] || real_write_checker
	start_collector --dir "$T/ring" --size 256M
	: >"$g"
	bash "$T/harness.sh" "$hold" "$g" >"$T/live.out" 2>"$T/live.err" &
	hp=$!
	E2E_PIDS+=("$hp")
	end=$((SECONDS + 30))
	until grep -q '^READY=1' "$g"; do
		kill -0 "$hp" 2>/dev/null || fail "the live harness ended before the hang (its stderr below)" "$T/live.err"
		[ $SECONDS -lt $end ] || fail "the live harness never saw the hang in 30 s" "$g"
		sleep 0.1
	done
	local v
	v=$(gt VICTIM_PID "$g")
	log "live: the victim $v is hung; lldb attaches ($(grep -v '^READY' "$g" | tr '\n' ' '))"
	lldb_run live -p "$v" -o "plugin load $PLUGIN" -o "argus diagnose --json" \
		-o "script lldb.debugger.GetSelectedTarget().GetProcess().Detach()"
	lldb_no_crash
	# the JSON is what the diagnose command printed, between its command
	# echo and the next one; lldb's own warnings there (a language
	# plugin it lacks) are not ours: the JSON is the line opening with {
	sed -n '/^(lldb) argus diagnose --json$/,/^(lldb) script/p' "$LLDB_OUT" |
		sed '1d;$d' | grep '^{' >"$T/live.json"
	sed 's/^/    /' "$LLDB_OUT" | head -n 30 >&2
	if [ "$LLDB_RC" -ne 0 ] || ! [ -s "$T/live.json" ]; then
		soft "lldb: argus diagnose --json on the live victim failed (exit $LLDB_RC)"
	else
		/usr/bin/python3 "$T/check.py" live "$T/live.json" "$g" ||
			soft "lldb's argus diagnose of the live hang does not name the culprit"
	fi
	wait "$hp"
	local rc=$?
	[ $rc -eq 0 ] || soft "the live harness exited $rc after lldb detached: $(tail -n 3 "$T/live.err" | tr '\n' ' ')"
}

# real_finish WHAT: pass, or fail with every failed check (and keep the
# trace for offline work when REAL_KEEP_TRACES is set).
real_finish() {
	if [ ${#REAL_FAILS[@]} -eq 0 ]; then
		pass "$1"
	fi
	if [ -n "${REAL_KEEP_TRACES:-}" ] && [ -n "${TRACE:-}" ] && [ -f "$TRACE" ]; then
		mkdir -p "$REAL_KEEP_TRACES"
		cp "$TRACE" "$REAL_KEEP_TRACES/$E2E_NAME.argus"
		{
			echo "# $E2E_NAME: ground truth of $REAL_KEEP_TRACES/$E2E_NAME.argus (taken by the harness, not by Argus)"
			grep -v '^READY' "$GT"
			echo "# failed checks:"
			printf '#   %s\n' "${REAL_FAILS[@]}"
		} >"$REAL_KEEP_TRACES/$E2E_NAME.txt"
		log "kept the trace in $REAL_KEEP_TRACES/$E2E_NAME.argus"
	fi
	E2E_FAILED=1
	printf '[%s] FAIL: %d check(s) failed:\n' "$E2E_NAME" ${#REAL_FAILS[@]} >&2
	printf '    %s\n' "${REAL_FAILS[@]}" >&2
	exit 1
}
