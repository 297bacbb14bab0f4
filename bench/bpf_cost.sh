#!/usr/bin/env bash
# Where the collector's time goes: each BPF program's run count and mean
# run time, and user space's CPU per event, on the two workloads of
# bench/overhead.sh, beside the BPF floor (bench/floor.bpf.c's empty
# programs on the same raw tracepoints) measured in the same round.
#
#   sudo bench/bpf_cost.sh [BUILD_DIR] [ROUNDS] [OTHER_BUILD...]
#
# The kernel counts a program's runs and nanoseconds only while
# kernel.bpf_stats_enabled=1 (set for the run and restored after; the
# counting itself adds two clock reads per run, to argus and to the floor
# alike).  The counts are read with `bpftool prog show --json` just before
# and just after the workload, from inside the recorded command, so that
# the programs are still loaded; a program is ours when it was not loaded
# before the recorder started (run this on an otherwise quiet machine:
# another collector starting meanwhile would be counted too).
#
# Per workload and program: runs per workload run, ns per run (median of
# the rounds), and the floor's ns per run on the same tracepoint.  Then the
# totals: BPF ns per recorded event, argus's BPF ns above the floor per
# event, and the recorder's user-space CPU per event ("collector CPU" of
# `argus record`, which includes the drain, sorting, chunking, compression
# and unwinding).
#
# A/B in one run: `bench/bpf_cost.sh BASE ROUNDS OTHER...` runs every
# build's `argus record` in each round after the floor (in turn, the order
# rotated every round), and ends with one comparison table: per build, the
# hot programs' ns/run and the BPF ns/event above the floor of the same
# rounds.  On a busy machine a program's ns/run still moves by up to ~15
# between builds that do not change it: trust a difference that repeats
# over runs (the wall time of bench/ab.sh spreads 10-20% here).  ARGUS_BENCH_WORKLOADS picks
# the workloads (default "pipe messaging").
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_init "${1:-}"
reps=${2:-5}
builds=("$build" "${@:3}")
read -r -a workloads <<<"${ARGUS_BENCH_WORKLOADS:-pipe messaging}"
for b in "${builds[@]}"; do
  [ -x "$b/bin/argus" ] || { echo "bpf_cost: no $b/bin/argus (build first)" >&2; exit 1; }
done
command -v bpftool >/dev/null || { echo "bpf_cost: bpftool missing (scripts/install-deps.sh)" >&2; exit 1; }
[ -x "$build/bin/floor_probe" ] || { echo "bpf_cost: no $build/bin/floor_probe (build first)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "bpf_cost: run as root (loads BPF, sets kernel.bpf_stats_enabled)" >&2; exit 1; }

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$tmp"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

declare -A work=(
  [pipe]="taskset -c 0 perf bench sched pipe -l 100000"
  [messaging]="perf bench sched messaging -g 4 -l 300"
)

# snap FILE: the loaded programs' ids, names, run counts and run times.
snap() { bpftool prog show --json >"$1" 2>/dev/null || echo '[]' >"$1"; }

# one TRACER WORKLOAD ROUND: runs the workload under the tracer with
# snapshots around it; leaves $tmp/TRACER.WORKLOAD.ROUND.{pre,before,after}
# and, for argus, the record's summary line.
one() {
  local tr=$1 wl=$2 r=$3 base=$tmp/$1.$2.$3
  # shellcheck disable=SC2086 # the workload is words on purpose
  local inner="bpftool prog show --json >$base.before 2>/dev/null; ${work[$wl]} >$base.out 2>&1; bpftool prog show --json >$base.after 2>/dev/null"
  snap "$base.pre"
  case $tr in
    floor) "$build/bin/floor_probe" -- sh -c "$inner" >/dev/null 2>&1 ;;
    argus*) "${builds[${tr#argus}]}/bin/argus" record "${argus_flags[@]}" -o "$tmp/a.argus" -- sh -c "$inner" \
             >/dev/null 2>"$base.rec" ;;
  esac
}

nb=${#builds[@]}
for r in $(seq "$reps"); do
  for wl in "${workloads[@]}"; do
    # rotated each round, so that every build runs in every position
    order=()
    for i in $(seq 0 $((nb - 1))); do order+=("argus$(((i + r - 1) % nb))"); done
    for tr in floor "${order[@]}"; do
      wait_quiet "${ARGUS_BENCH_QUIET_S:-10}" || true
      one "$tr" "$wl" "$r"
    done
  done
done

/usr/bin/python3 - "$tmp" "$reps" "${workloads[*]}" "${builds[@]}" <<'PY'
import json, os, re, statistics, sys
tmp, reps, workloads, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]

def load(p):
    try:
        return {x["id"]: x for x in json.load(open(p))}
    except (OSError, ValueError):
        return {}

def progs(tr, wl, r):
    """{name: (runs, ns)} of the programs the tracer loaded, over the workload."""
    base = f"{tmp}/{tr}.{wl}.{r}"
    pre, before, after = load(base + ".pre"), load(base + ".before"), load(base + ".after")
    out = {}
    for pid, a in after.items():
        if pid in pre or pid not in before:
            continue
        b = before[pid]
        runs = a.get("run_cnt", 0) - b.get("run_cnt", 0)
        ns = a.get("run_time_ns", 0) - b.get("run_time_ns", 0)
        n = a["name"]
        r0, t0 = out.get(n, (0, 0))
        out[n] = (r0 + runs, t0 + ns)
    return out

def record_line(tr, wl, r):
    try:
        s = open(f"{tmp}/{tr}.{wl}.{r}.rec").read()
    except OSError:
        return None, None
    m = re.search(r"argus record: (\d+) events, .*collector CPU ([0-9.]+) s", s)
    return (int(m.group(1)), float(m.group(2))) if m else (None, None)

# the floor's programs are named after argus's tracepoints' handlers
# (floor.bpf.c); pair them by tracepoint
FLOOR_OF = {"on_switch": "floor_switch", "on_waking": "floor_waking", "on_sys_exit": "floor_sys_exit"}
med = lambda v: statistics.median(v) if v else float("nan")

print(f"BPF programs per workload run (median of {reps} rounds; ns/run with kernel.bpf_stats_enabled=1)\n")
HOT = ("on_sys_exit", "on_switch", "on_waking")
fmt = lambda x: "-" if x != x else f"{x:.0f}"
for wl in workloads:
    cmp = []
    for bi, bname in enumerate(builds):
        tr = f"argus{bi}"
        a_runs, a_ns, f_ns, evs, cpu, tot, tot_floor = {}, {}, {}, [], [], [], []
        for r in range(1, reps + 1):
            a, f = progs(tr, wl, r), progs("floor", wl, r)
            for n, (runs, ns) in a.items():
                a_runs.setdefault(n, []).append(runs)
                if runs:
                    a_ns.setdefault(n, []).append(ns / runs)
            for n, (runs, ns) in f.items():
                if runs:
                    f_ns.setdefault(n, []).append(ns / runs)
            e, c = record_line(tr, wl, r)
            if e:
                evs.append(e)
                cpu.append(c)
                tot.append(sum(ns for _, ns in a.values()) / e)
                tot_floor.append(sum(ns for _, ns in f.values()) / e)
        print(f"### {wl}" + (f", {bname}" if len(builds) > 1 else "") + "\n")
        print("| program | runs | ns/run | floor ns/run | ns above floor / run | share of argus BPF time |")
        print("|---|---|---|---|---|---|")
        total = sum(med(a_runs[n]) * med(a_ns.get(n, [])) for n in a_runs if a_ns.get(n))
        rows = sorted(a_runs, key=lambda n: -(med(a_runs[n]) * med(a_ns.get(n, [0]))))
        for n in rows:
            runs, ns = med(a_runs[n]), med(a_ns.get(n, []))
            if not runs:
                continue
            fl = med(f_ns.get(FLOOR_OF.get(n, ""), []))
            above = ns - fl if fl == fl else float("nan")
            share = runs * ns / total if total else 0
            print(f"| {n} | {runs:.0f} | {fmt(ns)} | {fmt(fl)} | {fmt(above)} | {share:.0%} |")
        if evs:
            e = med(evs)
            print(f"\nevents recorded: {e:.0f}; argus BPF {med(tot):.0f} ns/event, floor's BPF "
                  f"{med(tot_floor):.0f} ns/event, so {med(tot) - med(tot_floor):.0f} ns/event above "
                  f"the floor ({med(tot) / med(tot_floor):.1f}x); user space (collector CPU) "
                  f"{1e9 * med(cpu) / e:.0f} ns/event\n")
        else:  # a build that records nothing (an experiment): its programs' costs still count
            e = float("nan")
            print("\nno events recorded\n")
        cmp.append((bname, [med(a_ns.get(n, [])) for n in HOT], med(tot),
                    med(tot) - med(tot_floor), e, 1e9 * med(cpu) / e if evs else float("nan")))
        floors = [med(f_ns.get(FLOOR_OF[n], [])) for n in HOT]
    if len(builds) > 1 and cmp:
        print(f"### {wl}: the builds side by side (same rounds; floor "
              + ", ".join(f"{n} {fmt(x)}" for n, x in zip(HOT, floors)) + " ns/run)\n")
        print("| build | " + " | ".join(f"{n} ns/run" for n in HOT)
              + " | BPF ns/event | above floor ns/event | events | user ns/event |")
        print("|---|" + "---|" * (len(HOT) + 4))
        for bname, hot, t, above, e, u in cmp:
            print(f"| {bname} | " + " | ".join(fmt(x) for x in hot)
                  + f" | {fmt(t)} | {fmt(above)} | {fmt(e)} | {fmt(u)} |")
        print()
PY
