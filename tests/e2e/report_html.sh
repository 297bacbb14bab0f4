#!/bin/bash
# e2e: `argus report` draws a case study's diagnosis as an HTML page that a
# real browser renders (issue 15 §1).
#
# 1. argus record -- tests/apps/case_circular (the Chromium IME circular
#    wait: its ground truth names the culprit, ime_worker, and the chain);
# 2. argus report T --pid UI -o hang.html: a file of mode 0600;
# 3. headless Chromium renders it: --dump-dom gives the page after its
#    script ran, --screenshot the picture (kept as an artifact, see below);
# 4. from the dumped DOM:
#    - the script ran and parsed the embedded diagnosis (body[data-argus-ready]);
#    - the embedded diagnosis is `argus diagnose --json`'s, key for key;
#    - the culprit's row exists in every panel, its tid the JSON's culprit
#      and the app's CULPRIT_TID; the hung thread's row is UI_TID's;
#    - every arrow of the normal panel is an edge of the JSON path (its
#      ends' tids and its type), and every path edge has its arrow;
#    - every arrow of the hang panel is an edge the embedded Perfetto JSON
#      has as a flow between the same two threads;
#    - the culprit's row shows its wait (the JSON's syscall) over most of
#      its window, and its stack's first frame is on the page;
# 5. bad input: no -o, an -o that exists and argus did not create, an
#    unknown pid: one line naming `argus report`, non-zero, nothing written.
#
# Artifact: the screenshot and the page are copied to
# ${E2E_ARTIFACTS:-/tmp}/argus-e2e-report_html.artifacts/ (hang.png,
# hang.html), next to the test's temp dir, and kept after the test.
. "$(dirname "$0")/lib.sh"
e2e_init "$1"
command -v python3 >/dev/null || fail "python3 is needed to check the DOM"
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	fail "no chromium (Debian package chromium: scripts/install-deps.sh)"
[ -x "$APPS/case_circular" ] || fail "no app $APPS/case_circular (build first)"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
ART=${E2E_ARTIFACTS:-$(dirname "$T")}/argus-e2e-report_html.artifacts

record circ -- "$APPS/case_circular"
UI=$(kv UI_PID)
CULPRIT=$(kv CULPRIT_TID)
UI_TID=$(kv UI_TID)

"$ARGUS" report "$TRACE" --pid "$UI" -o "$T/hang.html" >"$T/r.out" 2>"$T/r.err" ||
	fail "argus report --pid $UI exited $?" "$T/r.err"
log "$(cat "$T/r.out")"
[ "$(stat -c %a "$T/hang.html")" = 600 ] || fail "the page is mode $(stat -c %a "$T/hang.html"), not 0600"
grep -qiE '<(script|link|img)[^>]+(src|href)="https?:' "$T/hang.html" &&
	fail "the page loads something from the network" "$T/hang.html"
"$ARGUS" diagnose "$TRACE" --pid "$UI" --json >"$T/d.json" 2>"$T/d.err" ||
	fail "argus diagnose --json exited $?" "$T/d.err"

# Chromium runs as root here: --no-sandbox is required for that, and its
# own profile dir inside $T keeps it away from root's.
# chrome WIDTH ARGS...: the page in a window WIDTH px wide
chrome() {
	local w=$1
	shift
	timeout -k 5 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/chrome" --window-size="$w",1100 "$@" "file://$T/hang.html"
}
# the page at 1000 and 1800 px: each fits its window (no sideways scroll)
for w in 1000 1800; do
	chrome "$w" --dump-dom >"$T/dom-$w.html" 2>"$T/chrome-dom.err" ||
		fail "chromium --dump-dom ($w px) exited $?" "$T/chrome-dom.err"
	chrome "$w" --screenshot="$T/hang-$w.png" >"$T/chrome-shot.out" 2>"$T/chrome-shot.err" ||
		fail "chromium --screenshot ($w px) exited $?" "$T/chrome-shot.err"
	[ "$(head -c 8 "$T/hang-$w.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "the screenshot $T/hang-$w.png is not a PNG" "$T/chrome-shot.err"
	vw=$(grep -o 'data-view-w="[0-9]*"' "$T/dom-$w.html" | grep -o '[0-9]*')
	pw=$(grep -o 'data-page-w="[0-9]*"' "$T/dom-$w.html" | grep -o '[0-9]*')
	[ -n "$vw" ] && [ -n "$pw" ] || fail "the page's script did not measure its width at $w px" "$T/dom-$w.html"
	[ "$pw" -le "$vw" ] || fail "at $w px the page is $pw px wide in a $vw px window (scrolls sideways)"
	hw=$(grep -o 'data-hang-w="[0-9]*"' "$T/dom-$w.html" | grep -o '[0-9]*')
	log "at $w px: the page is $pw px wide in a $vw px window; the hang's timeline ${hw:-?} px"
	# one panel a line below 1700 px: the timeline takes the page's width
	# (a fixed 810-px drawing was 81% of 1000 px)
	if [ "$w" -lt 1700 ]; then
		[ -n "$hw" ] && [ $((hw * 10)) -ge $((vw * 9)) ] ||
			fail "at $w px the hang's timeline is ${hw:-?} px of $vw: not the page's width"
	fi
done
cp "$T/dom-1800.html" "$T/dom.html"
mkdir -p "$ART" && cp "$T/hang-1000.png" "$T/hang-1800.png" "$T/hang.html" "$ART/" &&
	log "artifacts: $ART/hang-1000.png, $ART/hang-1800.png, $ART/hang.html"

"$PY" - "$T/dom.html" "$T/d.json" "$CULPRIT" "$UI_TID" <<'PY' || fail "the rendered page does not match the diagnosis" "$T/r.err"
import json, sys
from html.parser import HTMLParser

dom, djson, culprit_gt, ui_tid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.panel = None
        self.rows, self.edges, self.rects, self.stacks = [], [], [], []
        self.markers = set()
        self.intext = None
        self.ticks = []
        self.body = {}
        self.script = None
        self.scripts = {}
        self.text = []
        self.row = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "body":
            self.body = a
        if tag == "section" and "panel" in cls:
            self.panel = a["data-panel"]
        if tag == "g" and "row" in cls:
            self.row = dict(a, panel=self.panel)
            self.rows.append(self.row)
        if tag == "rect" and ("run" in cls or "wait" in cls):
            self.rects.append(dict(a, panel=self.panel, kind=cls[0], tid=self.row["data-tid"]))
        if tag == "line" and "edge" in cls:
            self.edges.append(dict(a, panel=self.panel))
        if tag == "marker":
            self.markers.add(a.get("id"))
        if tag == "text" and self.row is not None and ("sub" in cls or "stackcol" in cls):
            self.intext = (cls[0], self.row)
            self.row.setdefault(cls[0], "")
        if tag == "text" and "tl" in cls:
            self.intext = ("tl", {"panel": self.panel})
            self.ticks.append(self.intext[1])
        if tag == "title":
            self.intext = None
        if tag == "details" and "stack" in cls:
            self.stacks.append(a)
        if tag == "script" and a.get("type") == "application/json":
            self.script = a["id"]
            self.scripts[self.script] = ""
    def handle_endtag(self, tag):
        if tag == "script":
            self.script = None
        if tag == "g":
            self.row = None
        if tag == "text":
            self.intext = None
    def handle_data(self, data):
        if self.intext:
            k, where = self.intext
            where[k] = where.get(k, "") + data
        if self.script:
            self.scripts[self.script] += data
        else:
            self.text.append(data)

p = Page()
p.feed(open(dom, encoding="utf-8").read())
d = json.loads(p.scripts["argus-diagnosis"])
want = json.load(open(djson))
perf = json.loads(p.scripts["argus-perfetto"])
from truth import check, done

check(p.body.get("data-argus-ready") == "1", "the page's script ran and read the embedded diagnosis")
check(d == want, "the embedded diagnosis is argus diagnose --json's")
panels = sorted({r["panel"] for r in p.rows})
check(panels == ["hang", "normal"], f"two panels, the normal run and the hang: {panels}")
c = d["culprit"]
check(c is not None and c["tid"] == culprit_gt, f"JSON culprit {c and c['tid']} == the app's {culprit_gt}")
for panel in panels:
    rows = [r for r in p.rows if r["panel"] == panel]
    crow = [r for r in rows if int(r["data-tid"]) == c["tid"]]
    check(len(crow) == 1 and "culprit" in crow[0]["data-role"].split(),
          f"{panel}: the culprit's row (tid {c['tid']}, role {crow and crow[0]['data-role']})")
    hrow = [r for r in rows if "hang" in r["data-role"].split()]
    check(len(hrow) == 1 and int(hrow[0]["data-tid"]) == ui_tid == d["hang"]["tid"],
          f"{panel}: the hung thread's row is {ui_tid}")
    want_tids = {d["hang"]["tid"], c["tid"]} | {n["tid"] for n in d["path"]} | \
                {k["tid"] for k in d["chain"]}
    check({int(r["data-tid"]) for r in rows} == want_tids,
          f"{panel}: rows {sorted(int(r['data-tid']) for r in rows)} are the diagnosis's threads {sorted(want_tids)}")

# normal panel: the arrows are the path, the whole path
path = d["path"]
npath = [e for e in p.edges if e["panel"] == "normal"]
steps = sorted(int(e["data-path-step"]) for e in npath)
check(steps == [i for i in range(1, len(path)) if path[i]["edge"]],
      f"one arrow per edge of the path: steps {steps} of {len(path)} nodes")
for e in npath:
    i = int(e["data-path-step"])
    src, dst = int(e["data-edge-src-tid"]), int(e["data-edge-dst-tid"])
    check(src == path[i]["tid"] and dst == path[i - 1]["tid"] and e["data-edge-type"] == path[i]["edge"],
          f"arrow {e['data-edge-id']} {e['data-edge-type']} {src}->{dst} is path[{i}] "
          f"{path[i]['edge']} {path[i]['tid']}->{path[i-1]['tid']}")
    check(int(e["data-t0"]) <= int(e["data-t1"]), f"arrow {e['data-edge-id']} goes forward in time")

# hang panel: every arrow is a flow of the embedded Perfetto JSON
flows = {}
for ev in perf["traceEvents"]:
    if ev.get("ph") in ("s", "f"):
        flows.setdefault(ev["id"], {})[ev["ph"]] = ev["tid"]
hang = [e for e in p.edges if e["panel"] == "hang"]
check(len(hang) > 0, f"{len(hang)} arrows in the hang window")
for e in hang:
    f = flows.get(int(e["data-edge-id"]), {})
    check(f.get("s") == int(e["data-edge-src-tid"]) and f.get("f") == int(e["data-edge-dst-tid"]),
          f"hang arrow {e['data-edge-id']} {e['data-edge-type']} {e['data-edge-src-tid']}->"
          f"{e['data-edge-dst-tid']} is Perfetto flow {f}")

# every arrow has its head: a marker of its type is defined
for e in p.edges:
    m = (e.get("marker-end") or "")[len("url(#"):-1]
    check(m in p.markers, f"arrow {e['data-edge-id']} {e['data-edge-type']}: its head #{m} is defined")
for ty in ("wakeup", "message", "futex", "timer", "signal", "holder"):
    check(f"ah-{ty}" in p.markers, f"an arrowhead for {ty} edges")

# each row says its process and role under the thread's name
procs = {d["hang"]["tid"]: d["hang"]["process"]}
procs.update({k["tid"]: k["process"] for k in d["chain"]})
procs[c["tid"]] = c["process"]
for r in p.rows:
    sub = r.get("sub", "")
    check(all(w in sub for w in r["data-role"].split()),
          f"{r['panel']}: row {r['data-tid']}'s label says its role {r['data-role']!r}: {sub!r}")
    if int(r["data-tid"]) in procs:
        check(sub.startswith(procs[int(r["data-tid"])]),
              f"{r['panel']}: row {r['data-tid']}'s label says its process: {sub!r}")
# the culprit's stack beside its row: its top frame, in every panel
for r in [r for r in p.rows if int(r["data-tid"]) == c["tid"]]:
    want = (c.get("stack") or ["(no stack in the trace)"])[0]
    check(r.get("stackcol") == want, f"{r['panel']}: the culprit's top frame beside its row: "
          f"{r.get('stackcol')!r} == {want!r}")
# the time scale says its unit; a window of seconds in seconds
for panel in panels:
    ts = [t["tl"] for t in p.ticks if t["panel"] == panel]
    check(len(ts) >= 2 and all(t.endswith((" ms", " s")) for t in ts),
          f"{panel}: axis labels with units: {ts}")

# the culprit's wait in the hang window, and its stack
w0, w1 = c["window_ns"]
waits = [r for r in p.rects if r["panel"] == "hang" and int(r["tid"]) == c["tid"] and r["kind"] == "wait"
         and r.get("data-syscall") == c["wait"]["syscall"]]
cover = sum(max(0, min(int(r["data-t1"]), w1) - max(int(r["data-t0"]), w0)) for r in waits)
check(cover * 2 > w1 - w0, f"the culprit's row waits in {c['wait']['syscall']} over "
      f"{cover/1e6:.0f} of its {(w1-w0)/1e6:.0f} ms window")
st = [s for s in p.stacks if int(s["data-tid"]) == c["tid"]]
check(len(st) >= 1, "the culprit's stack is on the page")
if c["stack"]:
    check(c["stack"][0] in "".join(p.text), f"its first frame is shown: {c['stack'][0]}")
check(d["verdict"] in "".join(p.text), "the verdict is shown")
done()
PY

# Bad input: one line naming the command, non-zero, nothing written.
expect_clean_error '-o' "$ARGUS" report "$TRACE" --pid "$UI"
printf 'mine\n' >"$T/theirs.html"
chmod 0644 "$T/theirs.html"
expect_clean_error 'exists' "$ARGUS" report "$TRACE" --pid "$UI" -o "$T/theirs.html"
[ "$(cat "$T/theirs.html")" = mine ] || fail "report changed a file it refused"
expect_clean_error 'no thread|no process|not in the trace' "$ARGUS" report "$TRACE" --pid 999999 -o "$T/none.html"
[ ! -e "$T/none.html" ] || fail "report wrote $T/none.html for an unknown pid"
pass "the page of case_circular renders in Chromium: culprit row $CULPRIT, arrows on the JSON path and on Perfetto flows; bad input refused"
