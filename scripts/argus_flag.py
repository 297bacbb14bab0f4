#!/usr/bin/python3
"""argus_flag.py - the data flag a spinning thread waits for, found from
Python through lldb (issue 13 §6, docs/lldb.md "From Python").

usage: argus_flag.py --pid PID [--tid TID] [--json] [--normal FILE]
                     [--max N] [--timeout SEC] [--plugin SO] [--watch]

It attaches to PID with lldb-16's Python API (`import lldb`), loads the
Argus plugin into that debugger (`plugin load .../libargus-lldb.so`), runs
`argus flag` on the thread (the main thread unless --tid: the one that
spins), prints what the plugin printed (with --json: the JSON object, with
"flag": {"addr", "size", "symbol", ...}), and detaches: the process runs on
as before.  The stepping goes through lldb, as in an lldb session; nothing
else traces the process meanwhile.

  --plugin SO  the plugin; default $ARGUS_LLDB_PLUGIN, else the build tree's
               (../build/lib from this script), else an install's ../lib
  --normal, --max, --timeout: as `argus flag` (docs/step-format.md)
  --watch      then, before detaching, `argus watch` the flag (the
               collector must run: `argus start`): its writes go into the
               trace from before the thread runs on, so the next hang's
               diagnosis follows the flag to its writer (docs/user-guide.md).
               The stepped thread is named as the flag's reader (argus watch
               --reader): a pure busy spin, which makes no syscall, gets its
               edges too.  argus watch's line goes to stderr.

Run as root (or as the process's user with kernel.yama.ptrace_scope=0).
Exit status: 0 the flag was found, 1 an error (one line on stderr, from the
plugin or from here), 2 bad arguments.  Needs python3-lldb-16 (Debian);
run it with /usr/bin/python3, the interpreter that package is built for.
"""
import json
import os
import subprocess
import sys

PROG = "argus_flag.py"
LLDB = "lldb-16"


def die(msg, code=1):
    print("%s: %s" % (PROG, msg), file=sys.stderr)
    sys.exit(code)


def usage_error(msg):
    die(msg + " (usage: argus_flag.py --pid PID [--tid TID] [--json] [--normal FILE]"
        " [--max N] [--timeout SEC] [--plugin SO] [--watch])", 2)


def parse(argv):
    opts = {"pid": None, "tid": None, "json": False, "normal": None, "max": None,
            "timeout": None, "plugin": None, "watch": False}
    numeric = {"--pid": "pid", "--tid": "tid", "--max": "max", "--timeout": "timeout"}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.strip())
            sys.exit(0)
        if a in ("--json", "--watch"):
            opts[a[2:]] = True
            i += 1
            continue
        if a in numeric or a in ("--normal", "--plugin"):
            if i + 1 >= len(argv):
                usage_error("%s needs a value" % a)
            v = argv[i + 1]
            if a in numeric:
                if not v.isdigit() or int(v) == 0:
                    usage_error("%s %r: expected a positive number" % (a, v))
                v = int(v)
            opts[numeric.get(a, a[2:])] = v
            i += 2
            continue
        usage_error("unknown argument %r" % a)
    if opts["pid"] is None:
        usage_error("--pid PID is required")
    return opts


def import_lldb():
    """lldb-16's Python module: `lldb-16 -P` says where it is."""
    # lldb finds lldb-server itself only inside the lldb binary
    os.environ.setdefault("LLDB_DEBUGSERVER_PATH", "/usr/lib/llvm-16/bin/lldb-server")
    try:
        path = subprocess.run([LLDB, "-P"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        die("cannot run `%s -P` to find lldb's Python module (%s): install lldb-16"
            " and python3-lldb-16" % (LLDB, e))
    sys.path.insert(0, path)
    try:
        import lldb
    except ImportError as e:
        die("cannot import lldb from %s (%s): install python3-lldb-16 and run this"
            " script with /usr/bin/python3" % (path, e))
    return lldb


def find_plugin(given):
    if given:
        cands = [given]
    elif os.environ.get("ARGUS_LLDB_PLUGIN"):
        cands = [os.environ["ARGUS_LLDB_PLUGIN"]]
    else:
        here = os.path.dirname(os.path.realpath(__file__))
        cands = [os.path.join(here, "..", "build", "lib", "libargus-lldb.so"),
                 os.path.join(here, "..", "lib", "libargus-lldb.so")]
    for c in cands:
        if os.path.isfile(c):
            return os.path.realpath(c)
    die("no plugin at %s: build Argus first (scripts/build.sh) or give --plugin SO"
        % " or ".join(cands))


def quote(s):
    """One word of an lldb command line."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def run(lldb, ci, command):
    r = lldb.SBCommandReturnObject()
    ci.HandleCommand(command, r)
    return r.Succeeded(), r.GetOutput() or "", r.GetError() or ""


def main():
    opts = parse(sys.argv[1:])
    pid = opts["pid"]
    if not os.path.isdir("/proc/%d" % pid):
        die("no process %d (it exited, or the pid is wrong)" % pid)
    plugin = find_plugin(opts["plugin"])
    lldb = import_lldb()

    lldb.SBDebugger.Initialize()
    # no ~/.lldbinit: a `plugin load` there would load the plugin first
    dbg = lldb.SBDebugger.Create(False)
    dbg.SetAsync(False)
    process = None
    code = 1
    try:
        target = dbg.CreateTarget("")
        err = lldb.SBError()
        process = target.AttachToProcessWithID(dbg.GetListener(), pid, err)
        if err.Fail() or not process.IsValid():
            die("cannot attach to process %d: %s (run as root; is another debugger"
                " attached?)" % (pid, err.GetCString() or "unknown error"))
        ci = dbg.GetCommandInterpreter()
        ok, out, errtext = run(lldb, ci, "plugin load " + quote(plugin))
        if not ok:
            die("plugin load %s failed: %s" % (plugin, errtext.strip() or out.strip()))
        cmd = "argus flag"
        for key in ("tid", "max", "timeout"):
            if opts[key] is not None:
                cmd += " --%s %d" % (key, opts[key])
        if opts["normal"]:
            cmd += " --normal " + quote(os.path.abspath(opts["normal"]))
        if opts["json"] or opts["watch"]:
            cmd += " --json"     # --watch reads the address from it
        ok, out, errtext = run(lldb, ci, cmd)
        if not ok:
            # the plugin's message ("error: argus flag: ...") on one line
            msg = errtext.strip().splitlines()
            die(msg[0][7:] if msg and msg[0].startswith("error: ") else
                (msg[0] if msg else "argus flag failed"))
        if opts["watch"]:
            try:
                j = json.loads(out)
                flag = j["flag"]
                addr, size = int(flag["addr"]), int(flag["size"])
                reader = int(j["tid"])      # the thread argus flag stepped
            except (ValueError, KeyError, TypeError) as e:
                die("argus flag's JSON has no flag address, size and thread (%s)" % e)
            if not opts["json"]:
                sym = flag.get("symbol") or flag.get("mapping") or "?"
                out = "argus flag: 0x%x (%d bytes, %s)\n" % (addr, size, sym)
        sys.stdout.write(out)
        if opts["watch"]:
            ok, wout, errtext = run(lldb, ci, "argus watch --addr 0x%x --len %d --reader %d"
                                    % (addr, size, reader))
            if not ok:
                msg = errtext.strip().splitlines()
                die(msg[0][7:] if msg and msg[0].startswith("error: ") else
                    (msg[0] if msg else "argus watch failed"))
            sys.stderr.write(wout)
        code = 0
    finally:
        # the process runs on as it did before we attached
        if process is not None and process.IsValid():
            process.Detach()
        lldb.SBDebugger.Destroy(dbg)
    return code


if __name__ == "__main__":
    sys.exit(main())
