#!/usr/bin/env python3
"""How long user threads' blocking waits last, from `argus dump` text.

    argus dump TRACE.argus | python3 bench/wait_lengths.py

Input for a decision, not a speed figure (docs/benchmarks.md, session 30):
every blocking switch of a user thread records its user stack (~170 ns of
BPF on this machine), so the share of short waits is what deferring the
stack of short blocks would save.  A wait is a switch-out with a nonzero
prev_state and a `blocked_in` syscall, by a thread of a pid other than 0
and other than argus itself; it ends at that thread's next switch-in.
Waits still open at the trace's end are counted apart.
"""
import collections
import re
import sys

SWITCH = re.compile(r'^\s*(\S+)\s+(\d+)/(\d+)\s+\[\d+\]\s+([\d.]+): switch\s+'
                    r'prev_state=(\S+) next=\S+:\d+/(\d+)(.*)$')
BINS = [(1e-4, '<0.1 ms'), (1e-3, '0.1-1 ms'), (1e-2, '1-10 ms'),
        (1e-1, '10-100 ms'), (1.0, '0.1-1 s'), (float('inf'), '>=1 s')]


def main():
    open_waits = {}
    counts = collections.Counter()
    ended = 0
    for line in sys.stdin:
        m = SWITCH.match(line)
        if not m:
            continue
        comm, pid, tid, ts, state, next_tid, rest = m.groups()
        ts = float(ts)
        start = open_waits.pop(int(next_tid), None)
        if start is not None:
            ended += 1
            counts[next(name for top, name in BINS if ts - start < top)] += 1
        if state != '0' and 'blocked_in' in rest and pid != '0' and comm != 'argus':
            open_waits[int(tid)] = ts
    print(f"user blocking waits that ended: {ended}; still blocked at the end: {len(open_waits)}")
    total = 0
    for _, name in BINS:
        total += counts[name]
        share = 100.0 * counts[name] / max(ended, 1)
        print(f"{name:>10}: {counts[name]:8d} {share:6.1f}%   cumulative {100.0 * total / max(ended, 1):6.1f}%")


if __name__ == '__main__':
    main()
