"""dumpcheck.py - the e2e tests' reader of `argus dump --json`.

Used through lib.sh:  check_dump DUMP-FILE PYTHON-CODE
dump_to wrote DUMP-FILE (the text dump) and DUMP-FILE.json (the same
events, --json, same options).  This loads the JSON events into `ev`, a
list of dicts, one per event in dump order, pairs each with its text line
(for evidence only: checks read the JSON fields) and runs PYTHON-CODE with:

  ev        the events; each dict holds the event's JSON fields
            (docs/trace-format.md, "dump --json") plus:
              n        its line number in the text dump
              line     its text line, stack  its frames ({"ip", "sym"})
              okind obj peer   the object's kind, obj and peer (numbers),
                       flattened from "obj" ({"kind","obj","peer","text"})
              blocked barg     a blocking switch's syscall and key arg
                       (blocked_in, blocked_arg)
  ENV       os.environ (the ground truth goes in through the environment)
  show(LIST)  prints events' lines and frames to stderr (at most 12)
  h(N)      N as 0x hex;  num(S)  "0x.." or decimal string as a number
  say(...)  print to stderr
  frames(e) the event's frames as text, "SYMBOL" or "[unknown]"
  frame_at(e, FN)  the index of e's first frame in function FN, -1 none

PYTHON-CODE exits non-zero (sys.exit(1), after printing the evidence)
when the property does not hold; falling off its end is success.

Loading also checks that the JSON and the text agree event by event: the
same number of events, and on each line the same comm, tid/pid, cpu,
time and type.  A disagreement fails the check.
"""
import json
import os
import re
import sys
import textwrap

HEAD = re.compile(r"^\s*(.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}): (\S+)")


def num(s):
    if s is None:
        return 0
    if isinstance(s, int):
        return s
    s = str(s)
    return int(s, 16) if s.lower().startswith("0x") else int(s)


def h(n):
    return "%#x" % n


def say(*a):
    print(*a, file=sys.stderr)


def frames(e):
    return [f.get("sym") or "[unknown]" for f in e.get("stack", [])]


def frame_at(e, fn):
    """Index of the first frame of e's stack in function fn, -1 if none."""
    pat = re.compile(r"(?:^|\s)" + re.escape(fn) + r"(?:\+0x[0-9a-f]+\b|\s|$)")
    for i, f in enumerate(frames(e)):
        if pat.search(f):
            return i
    return -1


def show(events):
    events = list(events)
    for e in events[:12]:
        say("    " + e["line"])
        for f in e.get("stack", []):
            say("    \t%16x %s" % (f["ip"], f.get("sym") or "[unknown]"))
    if len(events) > 12:
        say("    ... (%d in all)" % len(events))


def text_events(path):
    """(line number, line) of each event line of a text dump."""
    out = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for n, l in enumerate(f, 1):
            l = l.rstrip("\n")
            if l.startswith("\t") or l.startswith("#") or not l:
                continue
            out.append((n, l))
    return out


def agree(e, n, line):
    """The text line says what the JSON says (the header of every event)."""
    m = HEAD.match(line)
    if not m:
        return "line %d is not an event line: %s" % (n, line)
    comm, tid, pid, cpu, s, ns, typ = m.groups()
    want = (int(tid), int(pid), int(cpu), int(s) * 10**9 + int(ns), typ)
    got = (e["tid"], e["pid"], e["cpu"], e["ts"], e["type"])
    if want != got:
        return "line %d: text %s, JSON %s" % (n, want, got)
    if "\\" not in comm and comm != (e["comm"].strip() if e["comm"] is not None else "?"):
        return "line %d: text comm %r, JSON %r" % (n, comm, e["comm"])
    ctx = re.search(r": \S+\s+ctx=(\S+)", line)
    if (ctx.group(1) if ctx else "task") != e["ctx"]:
        return "line %d: text ctx %s, JSON %s" % (n, ctx and ctx.group(1), e["ctx"])
    return None


def load(path):
    ev = []
    with open(path + ".json", encoding="utf-8") as f:
        for l in f:
            e = json.loads(l)
            if "stats" in e:
                continue
            o = e.get("obj")
            if isinstance(o, dict):
                e["okind"], e["obj"], e["peer"] = o["kind"], o["obj"], o["peer"]
            if "blocked_in" in e:
                e["blocked"], e["barg"] = e["blocked_in"], e["blocked_arg"]
            e.setdefault("stack", [])
            ev.append(e)
    lines = text_events(path)
    if len(lines) != len(ev):
        say("FAIL: %s has %d events, its JSON %d" % (path, len(lines), len(ev)))
        sys.exit(2)
    for e, (n, line) in zip(ev, lines):
        e["n"], e["line"] = n, line
        bad = agree(e, n, line)
        if bad:
            say("FAIL: the JSON dump disagrees with the text: " + bad)
            sys.exit(2)
    return ev


def main():
    if len(sys.argv) != 3:
        say("usage: dumpcheck.py DUMP-FILE PYTHON-CODE")
        sys.exit(2)
    g = {"ev": load(sys.argv[1]), "ENV": os.environ, "show": show, "h": h,
         "num": num, "say": say, "frames": frames, "frame_at": frame_at, "sys": sys, "re": re}
    exec(compile(textwrap.dedent(sys.argv[2]), "check", "exec"), g)


if __name__ == "__main__":
    main()
