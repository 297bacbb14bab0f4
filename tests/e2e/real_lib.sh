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
#        READY=1      (the last line before the hang ends: the live phases
#                      time their attach from IN_WAIT_NS once it is there)
#      and lists every pid it starts in GT_FILE.pids (reaped on exit);
#   2. `argus record` of the harness, then real_check_diagnose (plain
#      `argus diagnose FILE --pid VICTIM --json`, no time) and
#      real_check_hangs (`argus hangs FILE --json`, no --pid: the victim's
#      hang listed, longest first; its rank depends on what else waited);
#   3. the keeper phase (issue 26: argusd started with --watch on the
#      victim's name keeps a snapshot by itself, and its stored diagnosis
#      names the culprit): `real_keeper HOLD COMM` starts a collector of
#      its own (`--no-watch-interactive --watch COMM --hang-dir $T/hangs`,
#      the default --hang-threshold and --hang-grace: what a user gets),
#      runs the harness again (ground truth $T/keeper.gt) and, with no
#      `argus save` at all, waits (90 s at most from READY) for argusd's
#      $T/hangs/<time>-COMM-VICTIM.json.  Its "diagnosis" must not be null
#      and must pass check.py keeper: the checks of `diagnose` (the
#      victim's hang, overlapping IN_WAIT_NS..DONE_NS; the culprit and its
#      rule; the chain starting with KEEPER_CHAIN if the ground truth has
#      it, else CHAIN: KEEPER_CHAIN is the chain as far as it is known when
#      argusd saves, for a harness whose chain acts only at the hang's end,
#      and stands only for a snapshot of a hang still going on, as
#      LIVE_CHAIN does for lldb); the live view (kind, wait, request, late,
#      start_ns, end_ns) is logged.  No .json: the failure says what
#      argusd saw (the tail of its argusd.log, `argus status`).  The
#      harness must end (exit 0); then that collector stops and the live
#      phases start their own.  COMM is the victim's name as the kernel
#      shows it (/proc/PID/comm, 15 bytes at most; the phase checks it).
#      The tests use HOLD 6: well past the 2 s threshold, and past
#      threshold + grace (5 s), so argusd saves a hang still going on, as
#      it does for any hang longer than 5 s.  The phase costs about HOLD s
#      + the time argusd takes to save and diagnose.  `real_keeper HOLD
#      COMM held` holds argusd's save (SIGSTOP) until the hang is over:
#      argusd must cut the snapshot again ("recut_ns") and the chain be
#      CHAIN (see real_keeper_hold);
#   4. two live phases, each the harness again (HOLD_S of 8 s or more)
#      under the test's private collector: `real_live HOLD 3` attaches
#      lldb-16 to the victim 3 s after IN_WAIT_NS, as a user would, seconds
#      into the hang; `real_live HOLD random` at a moment drawn uniformly
#      from [0.5, HOLD - 3] s (the log says which; REAL_LIVE_DELAY=S forces
#      it).  lldb loads the plugin and runs `argus diagnose --json`
#      (REAL_LIVE_CMDS): the same culprit as the harness names (check.py
#      live), while the hang still goes on (the command's time stamps are
#      checked against IN_WAIT_NS + HOLD); then `argus diagnose
#      --until-end=40 --json`, the victim kept stopped until what it waits
#      for happens: the hang must be over and the culprit and chain those
#      of the recording (check.py until); then lldb detaches and the
#      harness must run to its end.  HOLD is what
#      each harness says (the time the culprit keeps the hang going), so
#      HOLD >= delay + 3 s for lldb; tests whose hold starts before the
#      victim waits use 8.5 s.  Each phase costs about HOLD s.
#
# A failed check does not stop the test: every check runs and the test
# fails at the end (real_finish) with all of them, which tells more than
# the first one alone.  REAL_KEEP_TRACES=DIR copies the recorded trace
# and its ground truth to DIR/NAME.argus and DIR/NAME.txt, passed or
# failed (for the diagnosis developers to iterate on offline; the .txt
# lists the failed checks, if any).

REAL_FAILS=()
REAL_CLEANUP=()   # shell commands run on exit, before lib.sh's cleanup

# (mono: lib.sh's)

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

# The JSON checker: python3 CHECK WHAT JSON GT [LIVE_JSON ALL_JSON]
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
if what in ("diagnose", "live", "until", "keeper"):
    # (keeper: the "diagnosis" argusd stored beside its own snapshot)
    h = d.get("hang") or {}
    check(h.get("pid") == victim, f"the hang is the victim's: hang pid {h.get('pid')} == {victim}")
    if what == "until":
        # the victim is kept stopped by lldb: its wait cannot return, so
        # the hang's end is the event that would have woken it
        ue = d.get("until_end") or {}
        check(ue.get("ended") is True,
              f"--until-end saw the hang end: until_end.ended={ue.get('ended')!r} "
              f"(event {ue.get('event')!r}, stopped {ue.get('stopped')!r})")
    # (the until phase is checked before the harness has seen the end)
    if what in ("diagnose", "keeper") or (what == "until" and g.get("DONE_NS")):
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
        # live too: attached seconds into the hang, the culprit's own
        # culprit (the lock's holder behind a server's backend, the
        # child a holder waits for) must be as right as when recorded
        # (LIVE_CHAIN: what a live diagnosis can know, when the recorded
        # chain names someone who acts only after the attach)
        # (KEEPER_CHAIN: the same for the snapshot argusd keeps, of a
        # hang still going on at threshold + grace)
        if what in ("diagnose", "live", "until", "keeper"):
            key = ("LIVE_CHAIN" if what == "live" and "LIVE_CHAIN" in g else
                   "KEEPER_CHAIN" if what == "keeper" and "KEEPER_CHAIN" in g else "CHAIN")
            want_chain = [int(p) for p in g.get(key, "").split(",") if p]
            got = [x.get("pid") for x in d.get("chain") or []]
            check(got[:len(want_chain)] == want_chain,
                  f"chain pids {got} start with {want_chain} "
                  f"({[(x.get('comm'), x.get('rule')) for x in d.get('chain') or []]})")
        if what == "live" and g.get("LIVE_STOPPED"):
            st = (c.get("live") or {}).get("stopped")
            check(st == g["LIVE_STOPPED"],
                  f"the live culprit is said to be stopped by {st!r} == {g['LIVE_STOPPED']!r}")
    print(f"  verdict: {d.get('verdict')}", file=sys.stderr)
elif what == "hangs":
    hs = d.get("hangs") or []
    durs = [x.get("duration_ns", 0) for x in hs]
    check(durs == sorted(durs, reverse=True), "the listing is longest first")
    check(all("kind" in x for x in hs), "every hang has a kind")
    # listed, wherever its length puts it: other programs' longer waits
    # rank above it on a busy machine (helper shells, a build, the
    # sandbox's own threads), and they are hangs by the same rule
    s, e = int(g["IN_WAIT_NS"]), int(g["DONE_NS"])
    rank = [i for i, x in enumerate(hs) if x.get("pid") == victim
            and x.get("start_ns", 1 << 63) < e and x.get("end_ns", 0) > s]
    check(bool(rank), f"the victim {victim}'s hang (around {s}..{e}) is listed among the "
          f"{len(hs)}: {[(x.get('comm'), x.get('pid'), x.get('duration_ns', 0) // 1000000) for x in hs[:8]]}")
    if rank:
        print(f"  the victim's hang ranks {rank[0] + 1} of {len(hs)}; above it: "
              f"{[(x.get('comm'), x.get('pid'), x.get('duration_ns', 0) // 1000000) for x in hs[:rank[0]]]}",
              file=sys.stderr)
elif what == "agree":
    # the offline list (jfile) and the live rule's (argv[4]) over one
    # recording: every hang of one overlaps a hang of the same thread in
    # the other, and the victim's is in both
    live = json.load(open(sys.argv[4])).get("hangs") or []
    off = d.get("hangs") or []
    # a thread seen only asleep (one wait begun before the recording) is
    # left out of the offline list as dormant; argusd finds such a thread
    # asleep in /proc, the replay only from its first record (this VM
    # records no switch-out of pid 1's threads: they look like that)
    try:
        dormant = [x for x in json.load(open(sys.argv[5])).get("hangs") or [] if x.get("dormant")]
    except (IndexError, OSError, ValueError):
        dormant = []
    def show(x):
        return f"{x.get('comm')} {x.get('pid')}/{x.get('tid')} {x.get('kind')} {x.get('duration_ns', 0) // 1000000} ms"
    def match(x, ys):
        return any(y.get("tid") == x.get("tid") and y.get("start_ns", 0) < x.get("end_ns", 0)
                   and y.get("end_ns", 0) > x.get("start_ns", 0) for y in ys)
    # The two runs place a hang's ends at the same events but not always
    # at the same instant (live: a switch; offline: that switch or the
    # syscall exit after it, microseconds to milliseconds apart), so a
    # hang within 5% of the 2 s threshold may be on one side only: noted,
    # not failed (seen once in CI: a system shell's 2009 ms wait).
    near = 2.1e9
    for x in off:
        if not match(x, live) and x.get("duration_ns", 0) < near:
            print(f"  note: offline hang {show(x)}: within 5% of the threshold, not reported live", file=sys.stderr)
            continue
        check(match(x, live), f"offline hang {show(x)} is one the live rule reports too")
    for y in live:
        if not match(y, off) and y.get("ongoing") and y.get("unsettled"):
            print(f"  note: live rule's hang {show(y)}: open on a request whose reply is not seen", file=sys.stderr)
            continue
        if not match(y, off) and match(y, dormant):
            print(f"  note: live rule's hang {show(y)}: a thread the offline list calls dormant", file=sys.stderr)
            continue
        if not match(y, off) and y.get("duration_ns", 0) < near:
            print(f"  note: live rule's hang {show(y)}: within 5% of the threshold, not listed offline", file=sys.stderr)
            continue
        check(match(y, off), f"live rule's hang {show(y)} is one the offline list has too")
    check(any(x.get("pid") == victim for x in live), f"the live rule reports the victim {victim}")
sys.exit(1 if bad else 0)
PY
}

# real_check_report TRACE GT: `argus report` of the recording (after
# real_check_diagnose, whose $T/d.json it compares with), rendered by
# headless Chromium at 1400 px: the page's script ran, its embedded
# diagnosis is argus diagnose --json's, the culprit's row is there with
# its role and its top frame beside it, and the page fits its window.
# The screenshot goes to ${E2E_ARTIFACTS:-/tmp}/argus-e2e-NAME.artifacts.
real_check_report() {
	local trace=$1 g=$2 v chromium art
	v=$(gt VICTIM_PID "$g")
	chromium=$(command -v chromium || command -v chromium-browser) ||
		{ soft "no chromium to render argus report's page (scripts/install-deps.sh)"; return; }
	"$ARGUS" report "$trace" --pid "$v" -o "$T/report.html" >"$T/report.out" 2>"$T/report.err" ||
		{ soft "argus report $trace --pid $v exited $?: $(head -n 1 "$T/report.err" | head -c 300)"; return; }
	timeout -k 5 90 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/chrome" --window-size=1400,1000 --dump-dom "file://$T/report.html" \
		>"$T/report.dom" 2>"$T/report.chrome.err" ||
		{ soft "chromium could not render argus report's page"; return; }
	art=${E2E_ARTIFACTS:-$(dirname "$T")}/argus-e2e-$E2E_NAME.artifacts
	mkdir -p "$art"
	timeout -k 5 90 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/chrome" --window-size=1400,1000 --screenshot="$art/report-1400.png" \
		"file://$T/report.html" >/dev/null 2>&1 && log "report: $art/report-1400.png"
	/usr/bin/python3 - "$T/report.dom" "$T/d.json" <<'PY' ||
import json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
want = json.load(open(sys.argv[2]))
bad = []
def check(ok, what):
    print(("  ok:   " if ok else "  FAIL: ") + what, file=sys.stderr)
    ok or bad.append(what)
check('data-argus-ready="1"' in dom, "the page's script ran and read its diagnosis")
m = re.search(r'<script type="application/json" id="argus-diagnosis">(.*?)</script>', dom, re.S)
d = json.loads(m.group(1)) if m else None
check(d == want, "the embedded diagnosis is argus diagnose --json's")
c = (want or {}).get("culprit") or {}
rows = re.findall(r'<g class="row" data-tid="(\d+)" data-pid="\d+" data-role="([^"]*)"[^>]*>(.*?)</g>', dom, re.S)
mine = [(r, body) for t, r, body in rows if c and int(t) == c["tid"]]
check(bool(mine) and all("culprit" in r.split() for r, _ in mine),
      f"the culprit {c.get('tid')}'s row, with the role culprit: {[r for r, _ in mine]}")
top = (c.get("stack") or ["(no stack in the trace)"])[0]
esc = top.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
def beside(body):
    # (the page's script turns <title>s into data-tip attributes)
    m = re.search(r'<text class="stackcol"[^>]*>(.*?)(?:<title>|</text>)', body, re.S)
    return re.sub(r"<[^>]+>", "", m.group(1)) if m else None
check(all(beside(body) == esc for _, body in mine), f"its top frame beside it: {top!r}")
vw = re.search(r'data-view-w="(\d+)"', dom); pw = re.search(r'data-page-w="(\d+)"', dom)
check(bool(vw and pw) and int(pw.group(1)) <= int(vw.group(1)),
      f"the page fits its window: {pw and pw.group(1)} px in {vw and vw.group(1)}")
hw = re.search(r'data-hang-w="(\d+)"', dom)
check(bool(vw and hw) and int(hw.group(1)) * 10 >= int(vw.group(1)) * 9,
      f"the hang's timeline takes the page's width: {hw and hw.group(1)} px of {vw and vw.group(1)}")
sys.exit(1 if bad else 0)
PY
		soft "argus report's page of this recording does not show the diagnosis right"
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

# real_check_hangs TRACE GT: `argus hangs TRACE --json` (no --pid), and
# the same listing by argusd's live rule (--live-rule) agrees with it.
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
		soft "argus hangs without --pid does not list the victim's hang, longest first"
	# one hang model, two runs (issue 26): argusd's live watch replayed
	# over the same recording lists the same hangs, thread for thread
	"$ARGUS" hangs "$trace" --live-rule --json >"$T/hl.json" 2>"$T/hl.err"
	rc=$?
	log "argus hangs --live-rule (no --pid): exit $rc"
	if [ $rc -ne 0 ]; then
		soft "argus hangs $trace --live-rule --json exited $rc: $(head -n 1 "$T/hl.err" | head -c 300)"
		return
	fi
	"$ARGUS" hangs "$trace" --all --json >"$T/ha.json" 2>/dev/null
	# The victim's hang must be in both; any other disagreement (other
	# processes of this shared machine) is logged, not failed: the strict
	# checks are tests/unit/test_hang_model_agree.c (generated traces) and
	# test_hang_model_recorded.c (real recordings kept in the tree).
	if ! /usr/bin/python3 "$T/check.py" agree "$T/h.json" "$g" "$T/hl.json" "$T/ha.json"; then
		log "argus hangs --all, and --live-rule, of this recording (they disagree on other threads):"
		"$ARGUS" hangs "$trace" --all 2>&1 | sed 's/^/    offline: /' | head -n 30 >&2
		"$ARGUS" hangs "$trace" --live-rule 2>&1 | sed 's/^/    live:    /' | head -n 30 >&2
	fi
	/usr/bin/python3 - "$T/hl.json" "$(gt VICTIM_PID "$g")" <<'PY' ||
import json, sys
hs = json.load(open(sys.argv[1])).get("hangs") or []
sys.exit(0 if any(h.get("pid") == int(sys.argv[2]) for h in hs) else 1)
PY
		soft "argusd's live rule (argus hangs --live-rule) does not report the victim's hang in this recording"
}

# real_stop_collector: `argus stop` of the collector this test runs in its
# run dir, and wait (10 s) until its argusd is gone.
real_stop_collector() {
	local pid
	pid=$(collector_pid)
	timeout 30 "$ARGUS" stop >"$T/stop.out" 2>"$T/stop.err" ||
		soft "argus stop exited $?: $(head -n 2 "$T/stop.err" | tr '\n' ' ')"
	for _ in $(seq 1 40); do is_argusd "$pid" || break; sleep 0.25; done
	if is_argusd "$pid"; then
		soft "argusd $pid still runs 10 s after argus stop (killed)"
		kill -KILL "$pid" 2>/dev/null
	fi
	return 0
}

# real_start_harness NAME HOLD_S GT PHASE: the harness again in the
# background (its ground truth in GT, its output in $T/NAME.out and .err),
# until it says READY (30 s at most; PHASE names the phase in failures).
# Sets REAL_HP to its pid.
real_start_harness() {
	local name=$1 hold=$2 g=$3 phase=$4 end
	: >"$g"
	bash "$T/harness.sh" "$hold" "$g" >"$T/$name.out" 2>"$T/$name.err" &
	REAL_HP=$!
	E2E_PIDS+=("$REAL_HP")
	end=$((SECONDS + 30))
	until grep -q '^READY=1' "$g"; do
		kill -0 "$REAL_HP" 2>/dev/null || fail "$phase: the harness ended before the hang (its stderr below)" "$T/$name.err"
		[ $SECONDS -lt $end ] || fail "$phase: the harness never saw the hang in 30 s" "$g"
		sleep 0.1
	done
}

# real_keeper_hold HANGDIR COMM VICTIM GT IN_WAIT: stops argusd's save of
# the victim's hang (the keeper's child, comm argusd, a process group of
# its own, its diagnosis sessions in it) as soon as argusd creates
# HANGDIR/*-COMM-VICTIM.argus (just before the fork), and lets it go on
# once the harness wrote DONE_NS (the victim is back).
real_keeper_hold() {
	local hd=$1 comm=$2 v=$3 g=$4 in_wait=$5 argusd kid="" end=$((SECONDS + 60))
	argusd=$(collector_pid)
	until ls "$hd"/*-"$comm"-"$v".argus >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || { soft "keeper phase (held): argusd never began the save of $v"; return 0; }
		sleep 0.01
	done
	# the file is made before the fork, and the child sets its group
	# itself (so does argusd): until the group exists, kill fails
	until [ -n "$kid" ] && kill -STOP -- "-$kid" 2>/dev/null; do
		kid=$(pgrep -P "$argusd" -x argusd | head -n 1)
		[ $SECONDS -lt $end ] || { soft "keeper phase (held): no save process of argusd $argusd to hold"; return 0; }
		sleep 0.005
	done
	log "keeper phase (held): argusd's save $kid held $(real_live_secs $(( $(mono) - in_wait ))) s after IN_WAIT_NS"
	# a save that began after the victim was back (argusd's save of an
	# earlier hang took that long) holds the hang's end already: nothing
	# to cut again, and the phase cannot check that
	REAL_KEEPER_BEGAN_LATE=0
	if grep -q '^DONE_NS=' "$g"; then
		REAL_KEEPER_BEGAN_LATE=1
		log "keeper phase (held): the save began after the victim was back: the second cut is not checked"
	fi
	ls "$hd"/*-"$comm"-"$v".json >/dev/null 2>&1 &&
		soft "keeper phase (held): the save of $v was done before it could be held (its .json is there)"
	until grep -q '^DONE_NS=' "$g"; do
		[ $SECONDS -lt $end ] || break
		sleep 0.05
	done
	kill -CONT -- "-$kid" 2>/dev/null
	log "keeper phase (held): let go $(real_live_secs $(( $(mono) - in_wait ))) s after IN_WAIT_NS (the victim returned at $(real_live_secs $(( $(gt DONE_NS "$g") - in_wait ))) s)"
}

# real_keeper HOLD_S COMM [held]: the keeper phase (the header's step 3).
# The harness once more (ground truth $T/keeper.gt) under a collector of
# this phase's own, started with --watch COMM and --hang-dir $T/hangs; no
# `argus save`: argusd must keep the victim's hang by itself, and the
# diagnosis it stored in the .json must name the harness's culprit.
# `held` (its own $T/keeper_held.gt, $T/hangs_held): the moment argusd
# forks the victim's save, the phase stops that process (SIGSTOP to its
# group) until the hang is over, as a loaded machine or another save
# ahead of it would: the answers its diagnosis gets from /proc are then
# of after the hang, so argusd must cut the snapshot again (the .json's
# "recut_ns") and diagnose the whole hang; the chain must be CHAIN.
real_keeper() {
	local hold=$1 comm=$2 mode=${3:-} name=keeper
	local hd=$T/hangs g=$T/keeper.gt
	if [ "$mode" = held ]; then
		name=keeper_held hd=$T/hangs_held g=$T/keeper_held.gt
	elif [ -n "$mode" ]; then
		fail "real_keeper $hold $comm $mode: the third word is 'held' or nothing"
	fi
	[ -f "$T/check.py" ] || real_write_checker
	[ ${#comm} -le 15 ] || fail "real_keeper $hold $comm: a comm has 15 bytes at most"
	# a fresh collector for this phase only (a live phase's, if one ran
	# before, is stopped first)
	if [ "$REAL_LIVE_COLLECTOR" = 1 ]; then
		real_stop_collector
		REAL_LIVE_COLLECTOR=0
	fi
	local t0=$SECONDS
	start_collector --dir "$T/kring" --size 256M --no-watch-interactive --watch "$comm" --hang-dir "$hd"

	local hp end
	real_start_harness "$name" "$hold" "$g" "keeper phase"
	hp=$REAL_HP
	local v in_wait vcomm t_ready=$SECONDS
	v=$(gt VICTIM_PID "$g")
	in_wait=$(gt IN_WAIT_NS "$g")
	vcomm=$(cat "/proc/$v/comm" 2>/dev/null)
	log "keeper phase: the victim $v ($vcomm) hangs, held $hold s; argusd watches $comm" \
		"($(grep -v '^READY' "$g" | tr '\n' ' '))"
	[ "$vcomm" = "$comm" ] ||
		soft "keeper phase: the victim $v is named '$vcomm' (/proc/$v/comm), not '$comm': the phase watches the wrong name"
	[ "$mode" = held ] && real_keeper_hold "$hd" "$comm" "$v" "$g" "$in_wait"

	# argusd writes <time>-<comm>-<pid>.argus, then the .json last
	local json="" waited
	end=$((t_ready + 90))
	while :; do
		json=$(ls "$hd"/*-"$comm"-"$v".json 2>/dev/null | head -n 1)
		[ -n "$json" ] && break
		[ $SECONDS -lt $end ] || break
		sleep 0.2
	done
	waited=$((SECONDS - t_ready))
	wait "$hp"
	local rc=$?
	[ $rc -eq 0 ] || soft "keeper phase: the harness exited $rc: $(tail -n 3 "$T/$name.err" | tr '\n' ' ')"
	local done_ns
	done_ns=$(gt DONE_NS "$g")
	[ -n "$done_ns" ] && log "keeper phase: the victim returned $(real_live_secs $((done_ns - in_wait))) s after IN_WAIT_NS"

	"$ARGUS" status >"$T/$name.status" 2>&1
	log "keeper phase: $hd holds: $(ls "$hd" 2>/dev/null | tr '\n' ' ')"
	log "keeper phase: argus status: $(grep -E '^(hangs|watching)' "$T/$name.status" | tr -s ' ' | paste -sd ';')"
	if [ -z "$json" ]; then
		log "keeper phase: argusd.log (last 30 lines):"
		tail -n 30 "$ARGUS_RUN_DIR/argusd.log" 2>/dev/null | sed 's/^/    /' >&2
		log "keeper phase: argus status:"
		sed 's/^/    /' "$T/$name.status" >&2
		local msg
		msg="keeper phase: argusd kept no snapshot of $comm $v (no $hd/*-$comm-$v.json ${waited} s after READY; hang held $hold s)"
		msg+="; argusd.log (last lines): $(tail -n 12 "$ARGUS_RUN_DIR/argusd.log" 2>/dev/null | paste -sd '|' | head -c 1500)"
		msg+="; argus status: $(grep -E '^ *(collector|hangs|watching) ' "$T/$name.status" | tr -s ' ' | paste -sd '|' | head -c 800)"
		msg+="; $hd holds: $(ls "$hd" 2>/dev/null | paste -sd ' ')"
		soft "$msg"
	else
		log "keeper phase: $(basename "$json") came ${waited} s after READY ($(real_live_secs $(( $(mono) - in_wait ))) s after IN_WAIT_NS)"
		grep -F -e "$comm" "$ARGUS_RUN_DIR/argusd.log" 2>/dev/null | sed 's/^/    argusd.log: /' | tail -n 6 >&2
		local out crc
		out=$(/usr/bin/python3 - "$json" "$T/$name.diag.json" "$in_wait" <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
in_wait = int(sys.argv[3])
lv = d.get("live") or {}
def rel(ns):
    return "null" if ns is None else "%+.2f s" % ((ns - in_wait) / 1e9)
print(f"  stored: pid {d.get('pid')} tid {d.get('tid')} comm {d.get('comm')!r} watched {d.get('watched')}")
print(f"  live view: kind={lv.get('kind')} wait={lv.get('wait')} request={lv.get('request')} "
      f"late={lv.get('late')} start_ns={lv.get('start_ns')} ({rel(lv.get('start_ns'))} from IN_WAIT_NS) "
      f"end_ns={lv.get('end_ns')} ({rel(lv.get('end_ns'))}) ongoing={lv.get('ongoing')} "
      f"duration_ms={lv.get('duration_ms')} threshold_ms={lv.get('threshold_ms')}")
print(f"  saved_from_ns={rel(d.get('saved_from_ns'))} diagnosis_at_ns={rel(d.get('diagnosis_at_ns'))} "
      f"report={d.get('report')!r}")
diag = d.get("diagnosis")
if d.get("recut_ns") is not None:
    print(f"  RECUT: the waiter ran before the diagnosis was done: cut again at {rel(d.get('recut_ns'))}")
if lv.get("ongoing") is False:
    print("  ENDED: the snapshot holds the hang's end (not ongoing when saved)")
elif diag is not None and (diag.get("hang") or {}).get("ongoing") is False:
    print("  ENDED: the snapshot holds the hang's end (the diagnosed hang is not ongoing)")
if diag is None:
    print(f"  FAIL: the stored diagnosis is null: diagnose_error={d.get('diagnose_error')!r}")
    sys.exit(1)
json.dump(diag, open(sys.argv[2], "w"))
PY
)
		crc=$?
		printf '%s\n' "$out" >&2
		if [ $crc -ne 0 ]; then
			soft "keeper phase: $(basename "$json") has no diagnosis: $(printf '%s\n' "$out" | grep -E 'FAIL|Error|error' | paste -sd ';' | head -c 400)"
		else
			# KEEPER_CHAIN (what is known by threshold + grace into the
			# hang) stands only for a snapshot of a hang still going on:
			# one that holds the hang's end must have the whole CHAIN
			local kg=$g
			if printf '%s\n' "$out" | has '^  ENDED:' && grep -q '^KEEPER_CHAIN=' "$g"; then
				kg=$T/$name.ended.gt
				grep -v '^KEEPER_CHAIN=' "$g" >"$kg"
				log "keeper phase: the snapshot holds the hang's end: the chain must start with CHAIN, not KEEPER_CHAIN"
			fi
			if [ "$mode" = held ] && [ "${REAL_KEEPER_BEGAN_LATE:-0}" = 0 ] &&
				! printf '%s\n' "$out" | has '^  RECUT:'; then
				soft "keeper phase (held): argusd did not cut the snapshot again, though the hang ended while its save was held (no \"recut_ns\" in $(basename "$json"))"
			fi
			out=$(/usr/bin/python3 "$T/check.py" keeper "$T/$name.diag.json" "$kg" 2>&1)
			crc=$?
			printf '%s\n' "$out" >&2
			[ $crc -eq 0 ] ||
				soft "keeper phase: the diagnosis argusd stored in $(basename "$json") does not match the ground truth: $(printf '%s\n' "$out" | sed -n 's/^  FAIL: //p' | paste -sd ';' | head -c 400)"
		fi
	fi
	# stop this phase's collector: a later real_live starts its own
	real_stop_collector
	REAL_LIVE_COLLECTOR=0
	log "keeper phase: $((SECONDS - t0)) s"
	return 0
}

# The live phases (real_live): lldb attaches DELAY s into the hang (counted
# from IN_WAIT_NS), as a user would, seconds in.  Each phase is its own run
# of the harness; a test calls `real_live HOLD 3` (the fixed phase) and
# `real_live HOLD random` (a moment drawn from [0.5, HOLD - REAL_LIVE_LLDB_S]
# s, logged; REAL_LIVE_DELAY=S forces it).
REAL_LIVE_MIN_HOLD=8     # every live hang lasts at least this long (s)
REAL_LIVE_LLDB_S=3       # what a phase reserves, after its delay, for lldb to
                         # start, attach, load the plugin and run the commands
                         # below: the hang must still go on when they end
REAL_LIVE_SLACK_NS=500000000  # IN_WAIT_NS + HOLD s overstates the hang's end by
                         # up to this much (flock, dbus, late_child: the hold
                         # starts just before the victim waits)
# What lldb runs on the live victim after `plugin load`, in order, each as
# MODE:COMMAND; the JSON line the command prints goes to
# `check.py MODE JSON GT`.  Commands of mode `live` check a hang still in
# progress (they must end before the hang does).  A second command is one
# more element here.
# Each phase asks twice, as issue 21 wants: plain `argus diagnose` while
# the hang goes on (mode live), then `--until-end` (mode until: the
# process kept stopped, the collector recording until what the victim
# waits for happens; its answer comes after the hang's end, and must say
# the hang ended).  A test may set REAL_LIVE_CMDS itself before real_live.
# At the moment lldb attaches, the CLI is asked too, as a user at another
# terminal would: `argus save --last 20s` then `argus diagnose FILE --pid
# VICTIM --json` (mode live; a trace of this running system, so the live
# holders are asked by themselves), and `argus diagnose --pid VICTIM
# --until-end=40 --json` with no file (mode until: it waits on the running
# collector for the hang's end, which lldb's own --until-end delays).
REAL_LIVE_CMDS=("live:argus diagnose --json" "until:argus diagnose --until-end=40 --json")
REAL_CLI_UNTIL_ARGS=""   # more flags of that CLI --until-end (word-split)
REAL_LIVE_COLLECTOR=0
# (REAL_LIVE_DELAY is checked now, not after the phases before the random one)
if [ -n "${REAL_LIVE_DELAY:-}" ] && ! [[ $REAL_LIVE_DELAY =~ ^[0-9]+(\.[0-9]{1,3})?$ ]]; then
	fail "REAL_LIVE_DELAY=$REAL_LIVE_DELAY: seconds wanted (at most 3 decimals)"
fi

# real_live_stamp TAG: an lldb command printing REAL_TAG=<CLOCK_MONOTONIC ns>.
real_live_stamp() {
	printf '%s' "script print('REAL_$1=' + str(__import__('time').monotonic_ns()))"
}

# real_live_secs NS: NS nanoseconds as seconds with 2 decimals.
real_live_secs() {
	local ns=$1 sign=""
	[ "$ns" -lt 0 ] && { sign=-; ns=$((-ns)); }
	printf '%s%d.%02d' "$sign" $((ns / 1000000000)) $((ns % 1000000000 / 10000000))
}

# real_live HOLD_S DELAY: one live phase.  The harness again (its own
# ground truth $T/live_PHASE.gt) under the test's private collector,
# started by the first phase; once it says READY, sleeps until DELAY s
# after IN_WAIT_NS (DELAY: seconds, or `random`), then lldb-16 attaches to
# the victim, loads the plugin, runs REAL_LIVE_CMDS, each between two time
# stamps, and detaches; the harness must then run to its end (exit 0).
# Checks: each command's JSON names the harness's culprit, and the `live`
# commands ended before the hang did (else the phase tested nothing: a
# failure too).  Every failure message names the phase: "3 s" or
# "random at X s".
real_live() {
	local hold=$1 want=$2 ms ph name
	. "$(dirname "$0")/lldb_lib.sh"
	lldb_require
	[ -f "$T/check.py" ] || real_write_checker
	local hold_ms lldb_ms
	hold_ms=$(awk -v h="$hold" 'BEGIN { printf "%d", h * 1000 }')
	lldb_ms=$((REAL_LIVE_LLDB_S * 1000))
	[ "$hold_ms" -ge $((REAL_LIVE_MIN_HOLD * 1000)) ] ||
		fail "real_live $hold $want: a live hang holds at least $REAL_LIVE_MIN_HOLD s"
	if [ "$want" = random ]; then
		local lo=500 hi=$((hold_ms - lldb_ms))
		if [ -n "${REAL_LIVE_DELAY:-}" ]; then
			ms=$(awk -v d="$REAL_LIVE_DELAY" 'BEGIN { printf "%d", d * 1000 + 0.5 }')
		else
			ms=$(( ((RANDOM << 15) | RANDOM) % (hi - lo + 1) + lo ))
		fi
		ph="random at $(printf '%d.%03d' $((ms / 1000)) $((ms % 1000))) s"
		name=live_random
		if [ -n "${REAL_LIVE_DELAY:-}" ]; then
			log "live phase $ph: the delay REAL_LIVE_DELAY forces (the draw is from [0.5, $(real_live_secs $((hi * 1000000)))] s)"
		else
			log "live phase $ph: the delay drawn from [0.5, $(real_live_secs $((hi * 1000000)))] s" \
				"(REAL_LIVE_DELAY=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000))) repeats it)"
		fi
	else
		[[ $want =~ ^[0-9]+(\.[0-9]{1,3})?$ ]] || fail "real_live $hold $want: DELAY is seconds or random"
		ms=$(awk -v d="$want" 'BEGIN { printf "%d", d * 1000 + 0.5 }')
		ph="$want s"
		name=live_${want}s
	fi
	[ $((ms + lldb_ms)) -le "$hold_ms" ] ||
		fail "live phase $ph: a hold of $hold s is too short (the delay + ${REAL_LIVE_LLDB_S} s for lldb)"
	if [ "$REAL_LIVE_COLLECTOR" = 0 ]; then
		start_collector --dir "$T/ring" --size 256M
		REAL_LIVE_COLLECTOR=1
	fi

	local g=$T/$name.gt hp end
	real_start_harness "$name" "$hold" "$g" "live phase $ph"
	hp=$REAL_HP
	local v in_wait now target
	v=$(gt VICTIM_PID "$g")
	in_wait=$(gt IN_WAIT_NS "$g")
	target=$((in_wait + ms * 1000000))
	now=$(mono)
	if [ "$now" -lt "$target" ]; then
		local rest=$((target - now))
		sleep "$((rest / 1000000000)).$(printf '%09d' $((rest % 1000000000)))"
	fi
	local t_lldb
	t_lldb=$(mono)
	log "live phase $ph: the victim $v has been hung $(real_live_secs $((t_lldb - in_wait))) s (since IN_WAIT_NS); lldb attaches" \
		"($(grep -v '^READY' "$g" | tr '\n' ' '))"
	if ! kill -0 "$v" 2>/dev/null; then
		soft "live phase $ph: the victim $v was gone before lldb attached (a hang shorter than the hold of $hold s?)"
	else
		# a user at another terminal, at the same moment: `argus save`
		# of the last 20 s, then `argus diagnose` of it (of this running
		# system, so the live holders are asked by themselves)
		( "$ARGUS" save --last 20s -o "$T/$name.cli.argus" >/dev/null 2>"$T/$name.cli.err" &&
		  "$ARGUS" diagnose "$T/$name.cli.argus" --pid "$v" --json >"$T/$name.cli.json" 2>>"$T/$name.cli.err" ) &
		local clip=$!
		# and a third user asks the CLI to wait for the hang's end:
		# `argus diagnose --pid V --until-end` on the running collector
		# (no file), while lldb holds the victim stopped
		timeout 90 "$ARGUS" diagnose --pid "$v" --until-end=40 --json $REAL_CLI_UNTIL_ARGS \
			>"$T/$name.cli_until.json" 2>"$T/$name.cli_until.err" &
		local cliu=$!
		local args=(-p "$v" -o "$(real_live_stamp ATTACHED)" -o "plugin load $PLUGIN") i
		for i in "${!REAL_LIVE_CMDS[@]}"; do
			args+=(-o "$(real_live_stamp "BEGIN_$i")" -o "${REAL_LIVE_CMDS[i]#*:}" -o "$(real_live_stamp "END_$i")")
		done
		args+=(-o "script lldb.debugger.GetSelectedTarget().GetProcess().Detach()")
		lldb_run "$name" "${args[@]}"
		lldb_no_crash
		sed 's/^/    /' "$LLDB_OUT" | head -n 40 >&2
		local att
		att=$(sed -n 's/^REAL_ATTACHED=//p' "$LLDB_OUT")
		[ -n "$att" ] && log "live phase $ph: lldb attached by $(real_live_secs $((att - in_wait))) s into the hang"
		local mode cmd b e j bad crc
		for i in "${!REAL_LIVE_CMDS[@]}"; do
			mode=${REAL_LIVE_CMDS[i]%%:*}
			cmd=${REAL_LIVE_CMDS[i]#*:}
			j=$T/$name.$i.json
			# the command's output lies between its two stamps; lldb's own
			# warnings there (a language plugin it lacks) are not ours: the
			# JSON is the line opening with {
			sed -n "/^REAL_BEGIN_$i=/,/^REAL_END_$i=/p" "$LLDB_OUT" | grep '^{' >"$j"
			b=$(sed -n "s/^REAL_BEGIN_$i=//p" "$LLDB_OUT")
			e=$(sed -n "s/^REAL_END_$i=//p" "$LLDB_OUT")
			if [ -n "$b" ] && [ -n "$e" ]; then
				log "live phase $ph: \`$cmd\` ran $(real_live_secs $((b - in_wait)))..$(real_live_secs $((e - in_wait))) s into the hang (hold $hold s)"
				if [ "$mode" = live ] && [ $((e - in_wait)) -gt $((hold_ms * 1000000 - REAL_LIVE_SLACK_NS)) ]; then
					soft "live phase $ph: \`$cmd\` ended $(real_live_secs $((e - in_wait))) s into a hang held $hold s: too late to see the hang in progress (the phase tested nothing; a loaded machine?)"
				fi
			fi
			if [ "$LLDB_RC" -ne 0 ] || ! [ -s "$j" ]; then
				soft "live phase $ph: lldb: \`$cmd\` on the live victim failed (lldb exit $LLDB_RC): $(grep -m 1 '^error:' "$LLDB_OUT" | head -c 300)"
				continue
			fi
			bad=$(/usr/bin/python3 "$T/check.py" "$mode" "$j" "$g" 2>&1)
			crc=$?
			printf '%s\n' "$bad" >&2
			[ $crc -eq 0 ] ||
				soft "live phase $ph: lldb's \`$cmd\` does not match the ground truth: $(printf '%s\n' "$bad" | sed -n 's/^  FAIL: //p' | paste -sd ';' | head -c 400)"
		done
		real_cli_answer "$ph" "$clip" live "$T/$name.cli" "$g" \
			"\`argus save --last 20s\` + \`argus diagnose FILE --pid $v --json\`"
		real_cli_answer "$ph" "$cliu" until "$T/$name.cli_until" "$g" \
			"\`argus diagnose --pid $v --until-end=40 --json\` (no file)"
	fi
	wait "$hp"
	local rc=$?
	[ $rc -eq 0 ] || soft "live phase $ph: the harness exited $rc after lldb detached: $(tail -n 3 "$T/$name.err" | tr '\n' ' ')"
	local done_ns
	done_ns=$(gt DONE_NS "$g")
	[ -n "$done_ns" ] && log "live phase $ph: the victim returned $(real_live_secs $((done_ns - in_wait))) s after IN_WAIT_NS"
	return 0
}

# real_cli_answer PHASE PID MODE BASE GT WHAT: the CLI command WHAT,
# started in the background as PID at lldb's moment, wrote BASE.json and
# BASE.err; it must have exited 0 and its answer pass check.py MODE.
real_cli_answer() {
	local ph=$1 pid=$2 mode=$3 base=$4 g=$5 what=$6 bad crc
	if ! wait "$pid"; then
		soft "live phase $ph: $what at the same moment failed: $(head -n 2 "$base.err" | paste -sd ';' | head -c 300)"
		return
	fi
	log "live phase $ph: the CLI at the same moment, $what:"
	bad=$(/usr/bin/python3 "$T/check.py" "$mode" "$base.json" "$g" 2>&1)
	crc=$?
	printf '%s\n' "$bad" >&2
	[ $crc -eq 0 ] ||
		soft "live phase $ph: $what does not match the ground truth: $(printf '%s\n' "$bad" | sed -n 's/^  FAIL: //p' | paste -sd ';' | head -c 400)"
}

# real_finish WHAT: pass, or fail with every failed check (and keep the
# trace for offline work when REAL_KEEP_TRACES is set).
real_finish() {
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
	if [ ${#REAL_FAILS[@]} -eq 0 ]; then
		pass "$1"
	fi
	E2E_FAILED=1
	printf '[%s] FAIL: %d check(s) failed:\n' "$E2E_NAME" ${#REAL_FAILS[@]} >&2
	printf '    %s\n' "${REAL_FAILS[@]}" >&2
	exit 1
}
