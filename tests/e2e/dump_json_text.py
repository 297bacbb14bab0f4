"""dump_json_text.py TEXT-DUMP JSON-DUMP: the JSON dump holds every field
the text dump shows, and they agree, event by event.

Each JSON event is rendered back into the text line (and the frame lines
under it) from its JSON fields alone, the way docs/trace-format.md ("dump
--json") maps keys to the text, and compared byte for byte with the text
dump's line.  A field the JSON lacked, or spelled differently, makes the
line differ.  The stats line is checked against the "# " lines the same
way.  Strings that the text escapes (anything but printable ASCII) are
compared as wildcards: the escaping is argus_text_escape's, tested in
test_graph_export.

Exit 0 when all agree; else the first differences, and 1.
"""
import json
import re
import sys

WILD = "\0"     # stands for an escaped string in a rendered line


def tstr(s):
    """s as the text shows it, or WILD when the text escapes it."""
    if all(0x20 <= ord(c) < 0x7f for c in s):
        return s.replace("\\", "\\\\")
    return WILD


def hx(n):
    return "%#x" % n if n else "0"


def obj(o):
    return " obj=" + o["text"] if o else ""


def sync(e):
    out = ""
    kinds = ("mutex", "rwlock", "sem", "cond")
    k = next((k for k in kinds if k in e and not (k == "mutex" and "cond" in e)), None)
    if k is None:
        return " kind=%d addr=%s" % (e["sync_kind"], hx(e["addr"]))
    out += " %s=%s" % (k, hx(e[k]))
    if "mode" in e:
        out += " mode=" + e["mode"]
    if k == "cond" and "mutex" in e:
        out += " mutex=" + hx(e["mutex"])
    if "holder" in e:
        out += " holder=%d" % e["holder"]
    if "readers" in e:
        out += " readers=%d" % e["readers"]
    if "err" in e:
        out += " err=%d" % e["err"]
    if "waiters" in e:
        out += " waiters=%d" % e["waiters"]
        if e.get("broadcast"):
            out += " broadcast"
    return out


def fields(e):
    t = e["type"]
    if t == "switch":
        s = " prev_state=%s next=%s:%d/%d" % (hx(e["prev_state"]), tstr(e["next_comm"]) if e["next_comm"] is not None else "?",
                                             e["next_tid"], e["next_pid"])
        if "blocked_in" in e:
            s += " blocked_in %s(%s)" % (e["blocked_in"], hx(e["blocked_arg"]))
        return s + obj(e.get("obj"))
    if t == "waking":
        s = " target=%s:%d/%d target_cpu=%d" % (tstr(e["target_comm"]) if e["target_comm"] is not None else "?",
                                                e["target_tid"], e["target_pid"], e["target_cpu"])
        if "vec" in e:
            s += " vec=" + e["vec"]
        if "timer" in e:
            s += " timer=" + hx(e["timer"])
        return s
    if t in ("wakeup_new", "fork", "free"):
        return " child=%d/%d comm=%s" % (e["child_tid"], e["child_pid"], tstr(e["child_comm"]))
    if t == "exec":
        return " old_tid=%d comm=%s file=%s" % (e["old_tid"], tstr(e["new_comm"]), tstr(e["file"]))
    if t == "exit":
        return " code=%d" % e["code"]
    if t == "rename":
        return ' "%s"' % tstr(e["new_comm"])
    if t == "mark":
        return ' "%s" uid=%s' % (tstr(e["mark"]), "?" if e["uid"] is None else e["uid"])
    if t == "sys_enter":
        s = " %s(%s)" % (e["sys"], ", ".join(hx(a) for a in e["args"][:4]))
        lk = e.get("lock")
        if lk:
            s += " lock=%s:%s:%s" % (lk["kind"], lk["op"], "wait" if lk["wait"] else "try")
            if "start" in lk:
                s += " range=%s+%s" % (hx(lk["start"]), "eof" if lk["len"] is None else lk["len"])
        return s
    if t == "sys_exit":
        return " %s = %d arg0=%d" % (e["sys"], e["ret"], e["arg0"]) + obj(e.get("obj"))
    if t.startswith("hrtimer_"):
        s = " timer=%s fn=%s owner=%d" % (hx(e["timer"]), hx(e["fn"]), e["owner"])
        if t == "hrtimer_start":
            s += " expires=%d mode=%d" % (e["expires"], e["mode"])
        return s
    if t.startswith("irq_") or t.startswith("softirq_"):
        return " vec=%d" % e["vec"]
    if t.startswith("wq_"):
        return " work=%s fn=%s" % (hx(e["work"]), hx(e["fn"]))
    if t == "lost":
        return " count=%d" % e["count"]
    if t.startswith("mutex_"):
        return sync(e)
    if t in ("work_enqueue", "work_begin", "work_end"):
        s = " item=%s kind=%s" % (hx(e["item"]), tstr(e["kind"]))
        if e["fn"] is None:
            return s + " fn=?"
        s += " fn=" + hx(e["fn"])
        return s + (" " + tstr(e["fn_sym"]) if e["fn_sym"] is not None else "")
    if t == "work_boundary":
        return " tag=" + hx(e["tag"])
    if t == "live_hit":
        return " fn=%s item=%s as=%s" % (hx(e["fn"]), hx(e["item"]), e["as"])
    if t == "hwwatch":
        s = " addr=%s len=%d value=%s ip=%s watch=%d" % (hx(e["addr"]), e["len"],
                                                          "?" if e["value"] is None else hx(e["value"]),
                                                          hx(e["ip"]), e["watch"])
        return s + (" reader=%d" % e["reader"] if "reader" in e else "")
    return ""


def render(e):
    comm = "?" if e["comm"] is None else tstr(e["comm"])
    # an escaped comm is a wildcard: its width in the text is unknown here
    line = ("%s" if comm == WILD else "%16s") % comm
    line += " %7d/%-7d [%03d] %5d.%09d: %-14s" % (e["tid"], e["pid"], e["cpu"],
                                                  e["ts"] // 10**9, e["ts"] % 10**9, e["type"])
    if e["ctx"] != "task":
        line += " ctx=" + e["ctx"]
    lines = [line + fields(e)]
    for f in e.get("stack", []):
        lines.append("\t%16x %s" % (f["ip"], "[unknown]" if f["sym"] is None else tstr(f["sym"])))
    return lines


def same(want, got):
    if WILD not in want:
        return want == got
    pat = ".*".join(re.escape(p) for p in want.split(WILD))
    return re.fullmatch(pat, got) is not None


def stats_lines(s):
    st = s["stats"]
    return ["# events: %d in %d chunks" % (st["events"], st["chunks"]),
            "# lost events: " + " ".join("cpu%d=%d" % (i, n) for i, n in enumerate(st["lost"]))
            + " total=%d" % st["lost_total"]]


def main():
    text = open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read().split("\n")
    if text and text[-1] == "":
        text.pop()
    body = [l for l in text if not l.startswith("#")]
    hashes = [l for l in text if l.startswith("#")]
    got = []
    stats = None
    for l in open(sys.argv[2], encoding="utf-8"):
        e = json.loads(l)
        if "stats" in e:
            stats = e
            continue
        got.extend(render(e))
    bad = 0
    if len(got) != len(body):
        print("FAIL: the JSON renders %d lines, the text has %d" % (len(got), len(body)), file=sys.stderr)
        bad = 1
    for i, (w, g) in enumerate(zip(got, body)):
        if not same(w, g):
            print("FAIL: line %d differs:\n  text: %s\n  JSON: %s" % (i + 1, g, w.replace(WILD, "<escaped>")),
                  file=sys.stderr)
            bad += 1
            if bad > 10:
                break
    if stats is None:
        print("FAIL: no stats line in the JSON", file=sys.stderr)
        return 1
    st = stats["stats"]
    want = "# %d events in %d chunks" % (st["events"], st["chunks"])
    if not any(l.startswith(want) for l in hashes):
        print("FAIL: the text's totals do not say %r: %s" % (want, hashes), file=sys.stderr)
        bad = 1
    lost = stats_lines(stats)[1]
    if lost not in hashes:
        print("FAIL: the text's lost events are not %r: %s" % (lost, hashes), file=sys.stderr)
        bad = 1
    if not bad:
        print("ok: %d lines rendered from the JSON equal the text dump's" % len(got), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
