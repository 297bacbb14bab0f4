"""truth.py - what the e2e tests' Python checks share (lib.sh puts this
folder on PYTHONPATH):

    load_kv(*paths)   the ground truth apps print, KEY=VALUE lines; the
                      first value of each key wins
    load_json(path)   a file holding one JSON document (diagnose --json, ...)
    check(cond, what) prints "ok:   what" or "FAIL: what" on stderr, and
                      counts the failures
    done()            exits 1 if any check failed, 0 otherwise
    check_culprit(d, kv, rule)  a diagnosis' culprit is the app's
                      CULPRIT_{TID,PID,COMM,KIND}, found by rule, and the
                      culprit + chain start with the tids of CHAIN
    check_flag(d, kv) its flag is FLAG_ADDR, written by FLAG_WRITER_TID
"""
import json
import sys

bad = 0


def load_kv(*paths):
    kv = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.strip().split("=", 1)
                    kv.setdefault(k, v)
    return kv


def load_json(path):
    with open(path) as f:
        return json.load(f)


def check(cond, what):
    global bad
    print(("ok:   " if cond else "FAIL: ") + what, file=sys.stderr)
    bad += not cond


def done():
    sys.exit(1 if bad else 0)


def check_culprit(d, kv, rule):
    c = d["culprit"]
    check(c is not None, "a culprit is named")
    if not c:
        return
    check(c["tid"] == int(kv["CULPRIT_TID"]) and c["pid"] == int(kv["CULPRIT_PID"]) and
          c["comm"] == kv["CULPRIT_COMM"],
          f"culprit {c['comm']} {c['pid']}/{c['tid']} is "
          f"{kv['CULPRIT_COMM']} {kv['CULPRIT_PID']}/{kv['CULPRIT_TID']}")
    check(c["kind"] == kv["CULPRIT_KIND"], f"culprit kind {c['kind']} is {kv['CULPRIT_KIND']}")
    check(c["rule"] == rule, f"culprit rule {c['rule']} is {rule}")
    got = [c["tid"]] + [x["tid"] for x in d["chain"]]
    want = [int(t) for t in kv["CHAIN"].split(",")]
    check(got[:len(want)] == want, f"culprit + chain {got} starts with {want}")


def check_flag(d, kv):
    f = d["flag"]
    check(f is not None and f["addr"] == int(kv["FLAG_ADDR"], 16) and
          f["writer_tid"] == int(kv["FLAG_WRITER_TID"]),
          f"flag {f} is {kv['FLAG_ADDR']} written by {kv['FLAG_WRITER_TID']}")
