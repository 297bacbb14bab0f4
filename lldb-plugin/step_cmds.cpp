// step_cmds.cpp - the fine-grained commands inside lldb (issue 13 §6):
//
//   argus step [--tid TID] [--count N | --until COND] [--record FILE] [--json]
//   argus flag [--tid TID] [--normal FILE] [--record FILE] [--json]
//       on the attached process's selected thread (or --tid), stepped
//       through lldb (step_backend.cpp), with the CLI's own parser, loop
//       and output (cli/step_front.h via step_capture.c): the same text and
//       the same JSON as `argus step/flag --pid`.  The process must be
//       stopped; it stays stopped after, the thread advanced by what was
//       stepped, and lldb's selected thread is put back.  With --pid of
//       another process than the attached one, the CLI runs as it is
//       (ptrace).
//   argus step-diff A B [--json]
//       on files: the CLI as it is.
//   argus watch --addr ADDR [--len N] | --list | --remove ...
//       the collector arms the watchpoints, not lldb: the CLI as it is,
//       with --pid the attached process unless given.
//
// The step itself goes through lldb, never a second ptrace: lldb-server is
// the process's tracer, and PTRACE_SEIZE by anyone else fails.

#include "step_cmds.h"

#include <errno.h>
#include <string.h>

#include "capture.h"
#include "step_backend.h"
#include "step_capture.h"

namespace argus_lldb {

namespace {

std::string g_argus_binary = "argus";

// The words as a NULL-terminated argv (pointing into words, which must
// outlive it).
std::vector<char *> argv_of(const std::vector<std::string> &words)
{
	std::vector<char *> argv;
	for (auto &a : words)
		argv.push_back(const_cast<char *>(a.c_str()));
	argv.push_back(nullptr);
	return argv;
}

// A capture's result (e: what argus_capture__run/__spawn returned) as a Run.
Run from_capture(int e, argus_capture &cap, int failed_rc, const std::string &failed)
{
	Run r;
	if (e) {
		r.rc = failed_rc;
		r.err = failed + strerror(-e);
		return r;
	}
	r.rc = cap.rc;
	r.out = cap.out;
	r.err = cap.err;
	argus_capture__free(&cap);
	return r;
}

}  // namespace

Run capture(argus_capture_fn fn, const std::vector<std::string> &full)
{
	std::vector<char *> argv = argv_of(full);
	argus_capture cap;
	int e = argus_capture__run(fn, (int)full.size(), argv.data(), &cap);
	return from_capture(e, cap, -1, "argus: cannot capture the output: ");
}

void set_argus_binary(const std::string &path)
{
	g_argus_binary = path;
}

Run run_argus(const std::vector<std::string> &args)
{
	std::vector<std::string> full{g_argus_binary};
	full.insert(full.end(), args.begin(), args.end());
	std::vector<char *> argv = argv_of(full);
	argus_capture cap;
	int e = argus_capture__spawn(g_argus_binary.c_str(), argv.data(), &cap);
	return from_capture(e, cap, 1, "argus: cannot run " + g_argus_binary + ": ");
}

namespace {

using Args = std::vector<std::string>;

Run cli(const char *name, const Args &args)
{
	Args full{name};
	full.insert(full.end(), args.begin(), args.end());
	return run_argus(full);
}

Run error(const std::string &msg)
{
	Run r;
	r.err = msg;
	return r;
}

std::string opt_value(const Args &a, const char *name)
{
	for (size_t i = 0; i + 1 < a.size(); i++)
		if (a[i] == name)
			return a[i + 1];
	return "";
}

bool has(const Args &a, const char *name)
{
	for (auto &s : a)
		if (s == name)
			return true;
	return false;
}

lldb::SBProcess attached(lldb::SBDebugger d)
{
	lldb::SBTarget t = d.GetSelectedTarget();
	lldb::SBProcess p = t.IsValid() ? t.GetProcess() : lldb::SBProcess();
	if (!p.IsValid())
		return lldb::SBProcess();
	lldb::StateType s = p.GetState();
	if (s == lldb::eStateInvalid || s == lldb::eStateUnloaded || s == lldb::eStateDetached ||
	    s == lldb::eStateExited || s == lldb::eStateConnected)
		return lldb::SBProcess();
	return p;
}

// The opener step_capture.c calls once the CLI's parser accepted the args.
struct OpenCtx {
	lldb::SBProcess proc;
};

struct argus_stepper *open_through_lldb(void *ctx, uint32_t pid, uint32_t tid, uint32_t syscall_ms,
					char *err, size_t errlen)
{
	OpenCtx *c = static_cast<OpenCtx *>(ctx);
	std::string e;
	if (c->proc.GetProcessID() != pid) {
		snprintf(err, errlen, "process %u is not the one lldb is attached to", pid);
		return nullptr;
	}
	struct argus_stepper *s = open_stepper(c->proc, tid ? tid : pid, syscall_ms, e);
	if (!s)
		snprintf(err, errlen, "%s", e.c_str());
	return s;
}

Run step_or_flag(lldb::SBDebugger d, const char *name, const Args &args)
{
	lldb::SBProcess proc = attached(d);
	std::string pid = opt_value(args, "--pid");
	if (!pid.empty() && (!proc.IsValid() || pid != std::to_string(proc.GetProcessID())))
		return cli(name, args);   // another process: the CLI's ptrace, as from a shell
	if (!proc.IsValid())
		return error(std::string("argus ") + name +
			     ": no process: attach to the app first (process attach --pid PID), or give --pid PID");
	pid = std::to_string(proc.GetProcessID());
	if (proc.GetState() != lldb::eStateStopped)
		return error(std::string("argus ") + name + ": process " + pid + " is " +
			     lldb::SBDebugger::StateAsCString(proc.GetState()) +
			     ": stop it first (process interrupt); argus " + name + " steps a stopped thread");

	// --pid and --tid first, then the user's words (without them): the
	// CLI's parser checks everything else
	lldb::SBThread selected = proc.GetSelectedThread();
	Args full{name, "--pid", pid};
	if (!has(args, "--tid")) {
		if (!selected.IsValid())
			return error(std::string("argus ") + name + ": no selected thread in process " + pid +
				     ": pick one (thread select N) or give --tid TID");
		full.push_back("--tid");
		full.push_back(std::to_string(selected.GetThreadID()));
	}
	for (size_t i = 0; i < args.size(); i++) {
		if (args[i] == "--pid" && i + 1 < args.size()) {
			i++;
			continue;
		}
		full.push_back(args[i]);
	}

	OpenCtx ctx{proc};
	argus_capture_set_step_opener(open_through_lldb, &ctx);
	Run r = capture(argus_capture_step, full);
	argus_capture_set_step_opener(nullptr, nullptr);
	// stepping makes the stepped thread lldb's selected one: put lldb's
	// choice back
	if (selected.IsValid() && proc.GetState() == lldb::eStateStopped)
		proc.SetSelectedThreadByID(selected.GetThreadID());
	return r;
}

Run watch(lldb::SBDebugger d, const Args &args)
{
	if (!has(args, "--addr") || has(args, "--pid") || has(args, "--list") || has(args, "--remove"))
		return cli("watch", args);
	lldb::SBProcess proc = attached(d);
	if (!proc.IsValid())
		return error("argus watch: no process: attach to the app first (process attach --pid PID), "
			     "or give --pid PID");
	Args a{"--pid", std::to_string(proc.GetProcessID())};
	a.insert(a.end(), args.begin(), args.end());
	return cli("watch", a);
}

}  // namespace

Run stepping_command(lldb::SBDebugger d, const char *name, const Args &args)
{
	if (!strcmp(name, "step") || !strcmp(name, "flag"))
		return step_or_flag(d, name, args);
	if (!strcmp(name, "watch"))
		return watch(d, args);
	return cli(name, args);   // step-diff: files only
}

}  // namespace argus_lldb
