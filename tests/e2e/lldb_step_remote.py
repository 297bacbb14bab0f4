#!/usr/bin/python3
"""lldb_step_remote.py APP PLUGIN N OUTDIR - the checks of
tests/e2e/lldb_step_remote.sh, in one Python-hosted lldb-16.

`argus step` inside lldb sends plain steps straight to lldb-server
(lldb-plugin/remote_step.cpp) instead of SBThread::StepInstruction.
Checked here, on tests/apps/step_determ.c's work() (deterministic; lldb
launches it with ASLR off):
  1. the recording of N steps made that way is line for line the one
     lldb's own stepping makes (ARGUS_STEP_REMOTE=0): addresses,
     disassembly, every changed register and memory operand value;
  2. afterwards lldb sees the thread as it is: its pc and sp equal the
     kernel's (/proc/PID/task/TID/syscall), and a global the steps changed
     reads through SBProcess.ReadMemory as /proc/PID/mem has it, though
     lldb had read (cached) it before the steps;
  3. with SIGALRM every 20 ms and lldb set to stop on it, the signals that
     stop remote steps are handed on: the recording shows them delivered
     and the handler's instructions; after `process continue` the app
     ends with exit 0, the counter a run without lldb prints, and ALARMS>0.
Prints one "ok: ..." line per check; "FAIL: ..." and exit 1 on the first
failure.
"""
import os
import subprocess
import sys

sys.path.insert(0, subprocess.check_output(["lldb-16", "-P"], text=True).strip())
os.environ.setdefault("LLDB_DEBUGSERVER_PATH", "/usr/lib/llvm-16/bin/lldb-server")
import lldb  # noqa: E402

APP, PLUGIN, N, OUT = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def cmd(dbg, c):
    r = lldb.SBCommandReturnObject()
    dbg.GetCommandInterpreter().HandleCommand(c, r)
    return r.Succeeded(), (r.GetOutput() or "") + (r.GetError() or "")


def launch(dbg, args, stdout_path):
    target = dbg.CreateTarget(APP)
    bp = target.BreakpointCreateByName("work")
    info = lldb.SBLaunchInfo(args)
    info.AddOpenFileAction(1, stdout_path, False, True)
    err = lldb.SBError()
    # the plugin reads ARGUS_STEP_REMOTE when it steps, the app must not
    # see it: the same environment in every launch, the same stack
    os.environ.pop("ARGUS_STEP_REMOTE", None)
    proc = target.Launch(info, err)
    if not err.Success() or proc.GetState() != lldb.eStateStopped:
        fail("lldb could not launch %s to work(): %s" % (APP, err.GetCString()))
    target.BreakpointDelete(bp.GetID())
    return target, proc


def counter_addr(target):
    v = target.FindFirstGlobalVariable("counter")
    if not v.IsValid():
        fail("no global 'counter' in " + APP)
    return v.GetAddress().GetLoadAddress(target)


def proc_mem(pid, addr, n):
    with open("/proc/%d/mem" % pid, "rb") as f:
        f.seek(addr)
        return f.read(n)


# one debugger: the plugin loads once per process
DBG = lldb.SBDebugger.Create()
DBG.SetAsync(False)
ok, out = cmd(DBG, "plugin load " + PLUGIN)
if not ok:
    fail("plugin load: " + out)


def done(target, proc):
    if proc.GetState() != lldb.eStateExited:
        proc.Kill()
    DBG.DeleteTarget(target)


def stack_canary(proc):
    """The stack protector's canary, as glibc derives it at start-up
    (_dl_setup_stack_chk_guard): the first 8 bytes of the kernel's
    AT_RANDOM block with the lowest byte zeroed.  Read from the auxv and
    the process's memory: no expression is evaluated in the app (lldb's
    JIT of `pthread_self()` failed now and then on a loaded machine)."""
    import struct
    with open("/proc/%d/auxv" % proc.GetProcessID(), "rb") as f:
        auxv = f.read()
    at_random = 0
    for i in range(0, len(auxv) - 15, 16):
        key, val = struct.unpack_from("<QQ", auxv, i)
        if key == 25:           # AT_RANDOM
            at_random = val
    err = lldb.SBError()
    c = proc.ReadMemory(at_random, 8, err) if at_random else None
    if not c:
        fail("cannot read the stack canary of the app (AT_RANDOM 0x%x: %s)" % (at_random, err))
    return int.from_bytes(c, "little") & ~0xff


def record(remote, args=(), setup=()):
    dbg = DBG
    stdout_path = os.path.join(OUT, "app-%s-%d.out" % ("remote" if remote else "lldb", len(args)))
    target, proc = launch(dbg, list(args), stdout_path)
    # the stack protector's canary (fs:0x28) is random in every launch
    # (AT_RANDOM), ASLR or not: written as CANARY, the runs compare
    canary = stack_canary(proc)
    for c in setup:
        cmd(dbg, c)
    addr = counter_addr(target)
    err = lldb.SBError()
    before = proc.ReadMemory(addr, 8, err)   # lldb caches the line now
    if not remote:
        os.environ["ARGUS_STEP_REMOTE"] = "0"
    ok, out = cmd(dbg, "argus step --count %d" % N)
    os.environ.pop("ARGUS_STEP_REMOTE", None)
    if not ok:
        fail("argus step --count %d (%s): %s" % (N, "remote" if remote else "lldb", out))
    lines = out.replace("0x%x" % canary, "0xCANARY").splitlines()
    insns = [ln for ln in lines if ln[:6].strip().isdigit()]
    if len(insns) != N:
        fail("argus step printed %d instruction lines, want %d:\n%s" % (len(insns), N, out[-2000:]))
    with open(os.path.join(OUT, "steps-%s-%d.txt" % ("remote" if remote else "lldb", len(args))), "w") as f:
        f.write(out)
    return dbg, target, proc, insns, stdout_path, before


# -- 1 and 2: the remote recording, lldb's view after it ------------------
dbg, target, proc, remote_insns, _, before = record(True)
th = proc.GetSelectedThread()
pid, tid = proc.GetProcessID(), th.GetThreadID()
with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
    fields = f.read().split()
# a thread stopped outside a syscall: "-1 SP PC"
if len(fields) != 3 or fields[0] != "-1":
    fail("unexpected /proc/%d/task/%d/syscall: %s" % (pid, tid, fields))
k_sp, k_pc = int(fields[1], 16), int(fields[2], 16)
frame = th.GetFrameAtIndex(0)
if frame.GetPC() != k_pc or frame.GetSP() != k_sp:
    fail("after the steps lldb says pc 0x%x sp 0x%x, the kernel pc 0x%x sp 0x%x" %
         (frame.GetPC(), frame.GetSP(), k_pc, k_sp))
print("ok: lldb's pc and sp after %d remote steps are the thread's (0x%x, 0x%x)" % (N, k_pc, k_sp))
addr = counter_addr(target)
err = lldb.SBError()
seen = proc.ReadMemory(addr, 8, err)
truth = proc_mem(pid, addr, 8)
if truth == before:
    fail("the steps did not change counter (%s): nothing to check the cache with" % truth.hex())
if seen != truth:
    fail("lldb reads counter as %s after the steps, the process has %s (stale cache)" %
         (seen.hex() if seen else None, truth.hex()))
print("ok: lldb reads the changed global as the process has it (%s, was %s)" % (truth.hex(), before.hex()))
done(target, proc)

dbg, target, proc, lldb_insns, _, _ = record(False)
done(target, proc)
for i, (a, b) in enumerate(zip(remote_insns, lldb_insns)):
    if a != b:
        fail("the recordings differ at instruction %d:\n  remote: %s\n  lldb:   %s" % (i, a, b))
print("ok: %d instructions recorded alike by remote steps and by lldb's StepInstruction" % N)

# -- 3: signals during remote steps ----------------------------------------
plain = subprocess.run([APP], capture_output=True, text=True, check=True).stdout
want_counter = [ln for ln in plain.splitlines() if ln.startswith("COUNTER=")][0]
dbg, target, proc, insns, stdout_path, _ = record(
    True, ("alarm",), ("process handle SIGALRM --stop true --pass true --notify false",))
delivered = [ln for ln in insns if "(signal 14 delivered)" in ln]
in_handler = [ln for ln in insns if "on_alarm" in ln]
if not delivered or not in_handler:
    fail("with SIGALRM every 20 ms: %d steps say the signal was delivered, %d are in on_alarm" %
         (len(delivered), len(in_handler)))
print("ok: %d SIGALRMs handed on during the steps, %d instructions of the handler recorded" %
      (len(delivered), len(in_handler)))
cmd(dbg, "process handle SIGALRM --stop false --pass true --notify false")
proc.Continue()
if proc.GetState() != lldb.eStateExited or proc.GetExitStatus() != 0:
    fail("the app did not end normally after the steps: state %s, exit %d" %
         (lldb.SBDebugger.StateAsCString(proc.GetState()), proc.GetExitStatus()))
with open(stdout_path) as f:
    got = f.read()
if want_counter not in got.splitlines():
    fail("the app printed %r, a run without lldb %r" % (got, want_counter))
alarms = [int(ln.split("=")[1]) for ln in got.splitlines() if ln.startswith("ALARMS=")]
if not alarms or alarms[0] <= 0:
    fail("the app counted no SIGALRM: %r" % got)
print("ok: the app ended with exit 0, %s as without lldb, ALARMS=%d" % (want_counter, alarms[0]))
done(target, proc)
lldb.SBDebugger.Destroy(DBG)
