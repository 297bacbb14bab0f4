#!/usr/bin/python3
"""step_speed.py - the lldb peer of bench/step_speed.sh: instructions per
second of SBThread.StepInstruction on a process that spins (a Python
one-liner loop would step through the interpreter; a C target is given on
the command line).  Also with the registers read each step, as a step
recorder needs them.

And Argus's own stepping inside that lldb: the plugin (PLUGIN_SO) loaded,
`argus step --count N --record FILE` on the same thread: full registers,
decoding, memory operands, written to a recording (issue 13 §7: the lldb
path must not be slower than lldb's own stepping).

usage: step_speed.py TARGET N [PLUGIN_SO]
TARGET is the binary and its arguments, one string ("step_speed_target libc").
Prints "lldb_step N SECONDS RATE/s", "lldb_step_regs N SECONDS RATE/s" and,
with PLUGIN_SO, "lldb_step_il" and "lldb_plugin": the bare step and the
plugin interleaved in rounds of 1000 steps each (the same code, the same
load), N steps each.
"""
import tempfile

ROUND = 1000  # steps per interleaved round (plugin vs bare)
import os
import subprocess
import sys
import time

sys.path.insert(0, subprocess.check_output(["lldb-16", "-P"], text=True).strip())
os.environ.setdefault("LLDB_DEBUGSERVER_PATH", "/usr/lib/llvm-16/bin/lldb-server")
import lldb  # noqa: E402


def main():
    target_bin, n = sys.argv[1], int(sys.argv[2])
    child = subprocess.Popen(target_bin.split())
    time.sleep(0.1)
    dbg = lldb.SBDebugger.Create()
    dbg.SetAsync(False)
    target = dbg.CreateTarget("")
    err = lldb.SBError()
    proc = target.AttachToProcessWithID(dbg.GetListener(), child.pid, err)
    if not err.Success():
        print("lldb attach failed:", err.GetCString(), file=sys.stderr)
        child.kill()
        return 1
    thread = proc.GetThreadAtIndex(0)
    for label, regs in (("lldb_step", False), ("lldb_step_regs", True)):
        t0 = time.monotonic()
        for _ in range(n):
            thread.StepInstruction(False)
            if regs:
                gpr = thread.GetFrameAtIndex(0).GetRegisters().GetValueAtIndex(0)
                for i in range(gpr.GetNumChildren()):
                    gpr.GetChildAtIndex(i).GetValueAsUnsigned()
        dt = time.monotonic() - t0
        print(f"{label} {n} {dt:.3f} {n / dt:.0f}/s")
    if len(sys.argv) > 3:
        # the plugin against the bare step, interleaved in rounds of
        # ROUND steps each, so a change in the machine's load (shared
        # here) falls on both alike
        ci = dbg.GetCommandInterpreter()
        r = lldb.SBCommandReturnObject()
        ci.HandleCommand("plugin load " + sys.argv[3], r)
        if not r.Succeeded():
            print("plugin load failed:", r.GetError(), file=sys.stderr)
            proc.Kill()
            child.wait()
            return 1
        proc.SetSelectedThread(thread)
        rounds = max(1, n // ROUND)
        t_bare = t_plugin = 0.0
        with tempfile.TemporaryDirectory() as d:
            for _ in range(rounds):
                t0 = time.monotonic()
                for _ in range(ROUND):
                    thread.StepInstruction(False)
                t_bare += time.monotonic() - t0
                r = lldb.SBCommandReturnObject()
                t0 = time.monotonic()
                ci.HandleCommand("argus step --count %d --record %s/s.stp" % (ROUND, d), r)
                t_plugin += time.monotonic() - t0
                if not r.Succeeded():
                    print("argus step failed:", r.GetError(), file=sys.stderr)
                    proc.Kill()
                    child.wait()
                    return 1
        m = rounds * ROUND
        print(f"lldb_step_il {m} {t_bare:.3f} {m / t_bare:.0f}/s")
        print(f"lldb_plugin {m} {t_plugin:.3f} {m / t_plugin:.0f}/s")
    proc.Kill()
    child.wait()
    lldb.SBDebugger.Destroy(dbg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
