#!/usr/bin/python3
"""step_speed.py - the lldb peer of bench/step_speed.sh: instructions per
second of SBThread.StepInstruction on a process that spins (a Python
one-liner loop would step through the interpreter; a C target is given on
the command line).  Also with the registers read each step, as a step
recorder needs them.

usage: step_speed.py TARGET_BINARY N
Prints "lldb_step N SECONDS RATE/s" and "lldb_step_regs N SECONDS RATE/s".
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, subprocess.check_output(["lldb-16", "-P"], text=True).strip())
os.environ.setdefault("LLDB_DEBUGSERVER_PATH", "/usr/lib/llvm-16/bin/lldb-server")
import lldb  # noqa: E402


def main():
    target_bin, n = sys.argv[1], int(sys.argv[2])
    child = subprocess.Popen([target_bin])
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
    proc.Kill()
    child.wait()
    lldb.SBDebugger.Destroy(dbg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
