// argus_lldb.cpp - libargus-lldb.so: the `argus` command inside lldb-16.
//
// The job: a developer attached to a hung app asks Argus, from the
// debugger, why it is stuck.  This file is glue only (STYLE: "the glue is
// thin"): what to diagnose and how is the analysis session's
// (analysis/argus_session.h), the one every front end calls -- the CLI and
// argusd's hang keeper too -- which hands back libargus's structs and the
// report rendered from them: which hangs the thread has, which hang it
// took and why, which threads the diagnosis names and their stacks'
// functions, the choices argus pick lists.  No output is read back here.
// The commands that are the CLI's own on the session's trace or on the
// collector (show, similar, slice, diff, export, status, save, step-diff,
// watch) run the argus binary beside the plugin as a child (capture.h).
// The plugin includes nothing of cli/ and does not link it.
//
// What the glue adds over the session:
//   - the pid: hangs/diagnose default to the attached process;
//   - the session's working trace: hangs/diagnose first snapshot the last
//     2 minutes of the always-on collector (`argus save --last 2m`) into a
//     private temp dir; show/similar/slice/diff/export/pick read that
//     snapshot, so the segment ids they take are the ones diagnose printed;
//   - the hang in progress: diagnose passes --live (the snapshot is of
//     this running system), so libargus's one rule for every front end
//     (argus_diag__choose_hang) takes the hang still going at the end of
//     the snapshot, from 100 ms, whatever lldb sees the thread in now;
//     the debugger's own attach, stops and wake-ups are never edges, ends
//     of a wait or culprits (graphlib/graph_debugger.c);
//   - the live view: the hang's and culprits' threads of the attached
//     process, matched to lldb's threads (index, name) with their current
//     frames from lldb's unwinder.  Threads are only read: never stepped or
//     resumed (a thread blocked in a syscall must not hang the debugger);
//   - step, flag, step-diff, watch (step_cmds.cpp): the thread is stepped
//     through lldb when the user asks, with the step front end's code
//     (step/front/), which the CLI runs over ptrace;
//   - loading in Python's lldb: the host's liblldb is made global first
//     (host_liblldb.c).
//
// Errors go through the result object (SetError), so `lldb -b` exits
// non-zero when an argus command fails.  Times are CLOCK_MONOTONIC ns;
// pid = process (thread group) id, tid = thread id, as everywhere in Argus.

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include <lldb/API/LLDB.h>

#include "argus_session.h"
extern "C" {   // the collector's duration parser, the syscall table: no C++ guards of their own
#include "syscall_class.h"
#include "syscall_names.h"
#include "units.h"
}
#include "host_liblldb.h"
#include "step_cmds.h"

#ifndef ARGUS_LIB_TO_BIN
#define ARGUS_LIB_TO_BIN "../bin"
#endif

namespace lldb {
__attribute__((visibility("default"))) bool PluginInitialize(lldb::SBDebugger debugger);
}

namespace {

const char kDefaultLast[] = "2m";   // the snapshot hangs/diagnose take
// ARGUS_LLDB_LAST replaces it (a duration): the e2e test of a hang older
// than the snapshot (lldb_old_hang.sh) shortens it rather than wait 2m
std::string default_last()
{
	const char *e = getenv("ARGUS_LLDB_LAST");
	uint64_t ns = 0;
	return e && !argus_parse_duration(e, &ns) && ns ? e : kDefaultLast;
}
// and the one diagnose takes again when the thread slept through all of
// the first (a hang older than 2m: argus_session__diagnose's -ENODATA)
const char kWideLast[] = "10m";
const unsigned kLiveFrames = 8;     // lldb frames shown per thread
const char kWantVersion[] = "lldb version 16.";

using Args = std::vector<std::string>;

// ---- the session: one working trace per lldb process --------------------

// The snapshot lives in a private (0700) temp dir, removed when lldb exits
// (the plugin is never unloaded: lldb keeps plugins until exit), unless
// ARGUS_LLDB_KEEP=1.
class Session {
public:
	~Session()
	{
		if (dir_.empty())
			return;
		const char *keep = getenv("ARGUS_LLDB_KEEP");   // debugging: keep the session
		if (keep && !strcmp(keep, "1")) {
			fprintf(stderr, "argus: kept the session trace %s\n", trace_.c_str());
			return;
		}
		unlink(trace_.c_str());
		unlink(schema_.c_str());
		rmdir(dir_.c_str());
	}
	// The working trace's path; creates the dir on first use ("" on error).
	const std::string &trace(std::string &err)
	{
		if (dir_.empty()) {
			const char *tmp = getenv("TMPDIR");
			std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/argus-lldb.XXXXXX";
			std::vector<char> buf(tmpl.begin(), tmpl.end());
			buf.push_back(0);
			if (!mkdtemp(buf.data())) {
				err = "cannot create a session dir like " + tmpl + ": " + strerror(errno);
				return dir_;
			}
			dir_ = buf.data();
			trace_ = dir_ + "/session.argus";
			schema_ = dir_ + "/session.schema";
		}
		return trace_;
	}
	// The schema every graph command of the session is given: the user's
	// --schema file, copied into the session (so that argus pick replays
	// it even if the user's file changes).  "" on error.  The debugger's
	// own wake-ups need no schema line: libargus never makes them edges
	// (docs/diagnosis.md, "A debugger's stops").
	std::string schema(const std::string &user, std::string &err)
	{
		if (trace(err).empty())
			return "";
		std::string text;
		FILE *f = fopen(user.c_str(), "r");
		char buf[65536];
		size_t n;
		if (!f) {
			err = "cannot read the schema " + user + ": " + strerror(errno);
			return "";
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			text.append(buf, n);
		fclose(f);
		f = fopen(schema_.c_str(), "w");
		bool ok = f && fwrite(text.data(), 1, text.size(), f) == text.size();
		if (f && fclose(f))
			ok = false;
		if (!ok) {
			err = "cannot write " + schema_ + ": " + strerror(errno);
			return "";
		}
		return schema_;
	}
	bool have_trace() const { return !trace_.empty() && access(trace_.c_str(), R_OK) == 0; }
	const std::string &trace_path() const { return trace_; }

	Args last_diagnose;              // the CLI args of the last diagnose, without --pick
	std::vector<std::string> picks;  // its --pick answers so far (argus pick)
	std::vector<std::string> choices;  // its "at #S not taken: ... (--pick N)" lines
	bool have_diagnose = false;
	double snapshot_at = 0;          // now_s() of the last snapshot

private:
	std::string dir_;
	std::string trace_;
	std::string schema_;
};

Session g_session;

// CLOCK_MONOTONIC seconds.
double now_s()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// Past this age a snapshot's pids no longer stand for the running system
// well enough for diagnose --live (argus pick replays the last diagnose).
const double kLiveMaxAgeS = 30;
bool g_loaded;

// ---- running argus -------------------------------------------------------

// What a command run in process printed, and its status (step_cmds.h).
using CliResult = argus_lldb::Run;
using argus_lldb::capture;

// Runs `argus ARGS...`, the binary beside the plugin, as a child.
CliResult run_cli(const Args &args)
{
	return argus_lldb::run_argus(args);
}

std::string rtrim(std::string s)
{
	while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
		s.pop_back();
	return s;
}

// The CLI's usage lines name FILE and --pid, which the plugin supplies:
// keep the CLI's error line(s) and show the plugin's syntax instead.
std::string with_plugin_usage(const std::string &err, const char *syntax)
{
	std::string kept;
	size_t pos = 0;
	while (pos < err.size()) {
		size_t nl = err.find('\n', pos);
		std::string line = err.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
		pos = nl == std::string::npos ? err.size() : nl + 1;
		if (line.compare(0, 6, "usage:") == 0)
			break;
		kept += line + "\n";
	}
	return kept + "usage: " + syntax;
}

// Copies a CLI run into the result: stdout as output; on failure the
// stderr text as the error (lldb prefixes "error: "), else as output too.
bool finish(lldb::SBCommandReturnObject &result, const CliResult &r, const char *syntax)
{
	if (!r.out.empty())
		result.PutCString(r.out.c_str(), (int)r.out.size());
	if (r.rc != 0) {
		std::string e = r.err.empty() ? "argus: the command failed (exit " + std::to_string(r.rc) + ")"
					      : r.err;
		if (r.rc == 2 && syntax)
			e = with_plugin_usage(e, syntax);
		result.SetError(rtrim(e).c_str());
		result.SetStatus(lldb::eReturnStatusFailed);
		return false;
	}
	if (!r.err.empty())
		result.PutCString(r.err.c_str(), (int)r.err.size());
	result.SetStatus(lldb::eReturnStatusSuccessFinishResult);
	return true;
}

bool fail(lldb::SBCommandReturnObject &result, const std::string &msg)
{
	result.SetError(msg.c_str());
	result.SetStatus(lldb::eReturnStatusFailed);
	return false;
}

// Under `lldb -b` the debugger is synchronous; an interactive session may
// be async.  Every command runs synchronous and restores the mode.
class SyncGuard {
public:
	explicit SyncGuard(lldb::SBDebugger d) : d_(d), was_(d.GetAsync()) { d_.SetAsync(false); }
	~SyncGuard() { d_.SetAsync(was_); }

private:
	lldb::SBDebugger d_;
	bool was_;
};

// The words as typed, but --NAME=VALUE as two words, --NAME VALUE: the
// option parser (analysis/parse_opts.h) reads both forms the same, and
// the plugin's own look-ups below (has, take_opt: --pid, --last,
// --schema...) then see one.  --until-end=S stays whole: its value comes
// only after '=' (take_until_end).  After `--` nothing is an option.
Args to_args(char **command)
{
	Args a;
	bool options = true;
	for (char **p = command; p && *p; p++) {
		std::string w = *p;
		size_t eq = w.find('=');
		if (w == "--")
			options = false;
		if (options && w.compare(0, 2, "--") == 0 && eq != std::string::npos && eq > 2 &&
		    w.compare(0, eq, "--until-end") != 0) {
			a.emplace_back(w.substr(0, eq));
			a.emplace_back(w.substr(eq + 1));
		} else {
			a.emplace_back(w);
		}
	}
	return a;
}

bool wants_help(const Args &a)
{
	for (auto &s : a)
		if (s == "-h" || s == "--help")
			return true;
	return false;
}

lldb::SBProcess attached_process(lldb::SBDebugger d)
{
	lldb::SBTarget t = d.GetSelectedTarget();
	return t.IsValid() ? t.GetProcess() : lldb::SBProcess();
}

bool process_alive(lldb::SBProcess p)
{
	if (!p.IsValid())
		return false;
	lldb::StateType s = p.GetState();
	return s != lldb::eStateInvalid && s != lldb::eStateUnloaded && s != lldb::eStateDetached &&
	       s != lldb::eStateExited && s != lldb::eStateConnected;
}

// ---- the live view: lldb's threads beside the report ---------------------

// A thread the report names, for the live view: from the diagnosis API's
// struct, never from the report's text.
struct ReportThread {
	std::string label;               // "hang", "culprit", "then"
	uint32_t pid = 0, tid = 0;
	std::set<std::string> trace_fns; // function names of its trace stack
};

std::vector<ReportThread> report_threads(const argus_diag_report &rep)
{
	std::vector<ReportThread> v;
	for (uint32_t i = 0; i < rep.nthreads; i++) {
		const argus_diag_thread &t = rep.threads[i];
		ReportThread r;
		r.label = t.label;
		r.pid = t.pid;
		r.tid = t.tid;
		for (uint32_t j = 0; j < t.nframes; j++)
			if (t.frames[j].func && *t.frames[j].func)
				r.trace_fns.insert(t.frames[j].func);
		v.push_back(r);
	}
	return v;
}

// A libc function under its public name: lldb shows glibc's internal
// aliases (__GI___libc_read, __GI___poll), the trace's symbolizer "read".
std::string base_name(const char *fn)
{
	std::string name(fn ? fn : "");
	for (const char *pre : {"__GI_", "__libc_", "__"})
		if (name.compare(0, strlen(pre), pre) == 0)
			name = name.substr(strlen(pre));
	return name;
}

std::string frame_str(lldb::SBTarget target, lldb::SBFrame f, const std::set<std::string> &trace_fns)
{
	char buf[1024];
	const char *fn = f.GetFunctionName();
	lldb::addr_t pc = f.GetPC();
	std::string mod = "?";
	lldb::SBModule m = f.GetModule();
	if (m.IsValid() && m.GetFileSpec().GetFilename())
		mod = m.GetFileSpec().GetFilename();
	std::string s;
	snprintf(buf, sizeof(buf), "#%-2u 0x%016llx %s`%s", f.GetFrameID(), (unsigned long long)pc,
		 mod.c_str(), fn ? fn : "??");
	s = buf;
	lldb::SBSymbol sym = f.GetSymbol();
	if (sym.IsValid()) {
		lldb::addr_t start = sym.GetStartAddress().GetLoadAddress(target);
		if (start != LLDB_INVALID_ADDRESS && pc >= start) {
			snprintf(buf, sizeof(buf), " + %llu", (unsigned long long)(pc - start));
			s += buf;
		}
	}
	lldb::SBLineEntry le = f.GetLineEntry();
	if (le.IsValid() && le.GetFileSpec().GetFilename()) {
		snprintf(buf, sizeof(buf), " at %s:%u", le.GetFileSpec().GetFilename(), le.GetLine());
		s += buf;
	}
	if (fn && (trace_fns.count(fn) || trace_fns.count(base_name(fn))))
		s += "   [also in the trace's stack]";
	return s;
}

// Does lldb see this thread inside an event-loop wait right now?
bool in_loop_wait(lldb::SBThread th)
{
	uint32_t n = th.GetNumFrames();
	for (uint32_t i = 0; i < n && i < 2; i++) {
		const char *fn = th.GetFrameAtIndex(i).GetFunctionName();
		if (!fn)
			continue;
		std::string name = base_name(fn);
		if (name == "pselect")          // glibc's wrapper of pselect6
			name = "pselect6";
		// the poll family: syscalls/syscall_class.h
		if (argus_syscall_class_by_name(name.c_str()) & ARGUS_SC_POLL)
			return true;
	}
	return false;
}

void print_live(lldb::SBDebugger d, lldb::SBProcess proc, const argus_diag_report &report,
		lldb::SBCommandReturnObject &result)
{
	uint32_t pid = (uint32_t)proc.GetProcessID();
	std::vector<ReportThread> threads = report_threads(report);
	std::map<uint32_t, ReportThread> mine;   // by tid, first label wins
	std::vector<uint32_t> order;
	for (auto &t : threads) {
		if (t.pid != pid)
			continue;
		auto it = mine.find(t.tid);
		if (it == mine.end()) {
			mine[t.tid] = t;
			order.push_back(t.tid);
		} else {
			it->second.label += "+" + t.label;
			it->second.trace_fns.insert(t.trace_fns.begin(), t.trace_fns.end());
		}
	}
	if (order.empty())
		return;
	// A running process (the user continued it) is stopped to read its
	// threads and resumed after: SBProcess::Stop halts it with lldb's own
	// timeout, nothing is stepped, so a thread blocked in a syscall
	// cannot hang the debugger.
	bool resume = false;
	if (proc.GetState() == lldb::eStateRunning) {
		lldb::SBError e = proc.Stop();
		if (e.Fail() || proc.GetState() != lldb::eStateStopped) {
			result.Printf("lldb      process %u is running and did not stop (%s): its threads are "
				      "not shown\n", pid, e.Fail() && e.GetCString() ? e.GetCString() : "no stop event");
			return;
		}
		resume = true;
	}
	if (proc.GetState() != lldb::eStateStopped) {
		result.Printf("lldb      process %u is %s, not stopped: its threads are not shown\n", pid,
			      lldb::SBDebugger::StateAsCString(proc.GetState()));
		return;
	}
	lldb::SBTarget target = d.GetSelectedTarget();
	result.Printf("lldb      the report's threads of process %u as lldb sees them now "
		      "(%s, not stepped):\n", pid, resume ? "stopped for this, resumed after" : "stopped");
	for (uint32_t tid : order) {
		const ReportThread &t = mine[tid];
		lldb::SBThread th = proc.GetThreadByID(tid);
		if (!th.IsValid()) {
			result.Printf("  %-12s tid %u: no such thread in the process now (it exited)\n",
				      t.label.c_str(), tid);
			continue;
		}
		char stop[256] = "";
		th.GetStopDescription(stop, sizeof(stop));
		const char *name = th.GetName();
		result.Printf("  %-12s thread #%u tid %u \"%s\"%s%s%s\n", t.label.c_str(), th.GetIndexID(),
			      tid, name ? name : "", stop[0] ? ", stop reason: " : "", stop,
			      in_loop_wait(th) ? ", in its event-loop wait" : "");
		uint32_t n = th.GetNumFrames();
		for (uint32_t i = 0; i < n && i < kLiveFrames; i++)
			result.Printf("            %s\n", frame_str(target, th.GetFrameAtIndex(i), t.trace_fns).c_str());
		if (n > kLiveFrames)
			result.Printf("            ... %u more frames (thread backtrace -c N / bt)\n", n - kLiveFrames);
	}
	if (resume) {
		// async: a synchronous Continue would wait for the next stop,
		// i.e. block lldb until the app stops or exits
		bool was = d.GetAsync();
		d.SetAsync(true);
		lldb::SBError e = proc.Continue();
		d.SetAsync(was);
		if (e.Fail())
			result.Printf("lldb      could not resume process %u (%s): it is stopped\n", pid,
				      e.GetCString() ? e.GetCString() : "?");
	}
}

// ---- symbols: the attached process through lldb's target ------------------

// The CLI's stacks of the attached process are symbolized by lldb: the
// target has the process's modules as loaded now (found through
// /proc/PID/exe and the dynamic loader, so a binary renamed or replaced on
// disk since the trace recorded its path still resolves), their debug info,
// inlined functions and demangled names.  Other processes, or addresses
// lldb cannot place in a section, go to the CLI's own symbolizer.
struct LldbSymbols {
	// a pointer, set by PluginInitialize: a global SBDebugger would be
	// constructed at dlopen, before liblldb is bound (host_liblldb.c);
	// never freed, lldb unloads no plugin
	lldb::SBDebugger *debugger = nullptr;
	uint32_t frames = 0;     // frames lldb symbolized in the current command
	uint32_t pid = 0;        // ... of this process
};
LldbSymbols g_symbols;

int lldb_symbolize(void *ctx, uint32_t pid, uint64_t ip, char *buf, size_t len, char *func,
		   size_t func_len)
{
	auto *s = static_cast<LldbSymbols *>(ctx);
	lldb::SBTarget target = s->debugger->GetSelectedTarget();
	lldb::SBProcess proc = target.IsValid() ? target.GetProcess() : lldb::SBProcess();
	if (!process_alive(proc) || proc.GetProcessID() != pid)
		return 1;
	lldb::SBAddress addr = target.ResolveLoadAddress(ip);
	if (!addr.IsValid() || !addr.GetSection().IsValid())
		return 1;
	lldb::SBSymbolContext sc = target.ResolveSymbolContextForAddress(
		addr, lldb::eSymbolContextModule | lldb::eSymbolContextFunction | lldb::eSymbolContextBlock |
			      lldb::eSymbolContextLineEntry | lldb::eSymbolContextSymbol);
	const char *name = nullptr;
	lldb::addr_t start = LLDB_INVALID_ADDRESS;
	lldb::SBBlock inl = sc.GetBlock().GetContainingInlinedBlock();
	if (inl.IsValid() && inl.GetInlinedName()) {
		name = inl.GetInlinedName();
		start = inl.GetRangeStartAddress(0).GetLoadAddress(target);
	} else if (sc.GetFunction().IsValid()) {
		name = sc.GetFunction().GetDisplayName();
		start = sc.GetFunction().GetStartAddress().GetLoadAddress(target);
	} else if (sc.GetSymbol().IsValid()) {
		name = sc.GetSymbol().GetDisplayName();
		start = sc.GetSymbol().GetStartAddress().GetLoadAddress(target);
	}
	if (!name || !*name || start == LLDB_INVALID_ADDRESS || ip < start)
		return 1;
	int n = snprintf(buf, len, "%s+0x%llx", name, (unsigned long long)(ip - start));
	lldb::SBLineEntry le = sc.GetLineEntry();
	if (n > 0 && (size_t)n < len && le.IsValid() && le.GetLine() && le.GetFileSpec().GetFilename())
		n += snprintf(buf + n, len - (size_t)n, " (%s:%u)", le.GetFileSpec().GetFilename(), le.GetLine());
	const char *mod = sc.GetModule().IsValid() ? sc.GetModule().GetFileSpec().GetFilename() : nullptr;
	if (n > 0 && (size_t)n < len && mod)
		n += snprintf(buf + n, len - (size_t)n, " [%s]", mod);
	if (n <= 0)
		return 1;
	snprintf(func, func_len, "%s", name);
	s->frames++;
	s->pid = pid;
	return 0;
}

// The line after a report saying how many frames of the attached process
// lldb symbolized (g_symbols counts them while a command runs).
std::string symbols_line()
{
	return "symbols   " + std::to_string(g_symbols.frames) + " frame(s) of process " +
	       std::to_string(g_symbols.pid) +
	       " symbolized by lldb's target (the attached process as loaded now); "
	       "others by the trace's symbolizer\n";
}

// Like run_cli, for the commands that print stacks: says after the output
// how many frames of the attached process lldb symbolized.
CliResult run_cli_stacks(const Args &args, bool text_output)
{
	g_symbols.frames = 0;
	CliResult r = run_cli(args);
	if (r.rc == 0 && text_output && g_symbols.frames)
		r.out += symbols_line();
	return r;
}

// ---- argus diagnose --until-end: the wait's progress and Ctrl-C ---------

// The wait (analysis/until_end.c) runs inside the command: the process stays
// stopped, never continued.  While it waits, lldb's error stream gets a
// progress line when it is a terminal, and Ctrl-C stops the wait: the
// wait installs its own SIGINT handler for its duration (lldb 16 has no
// SBDebugger::InterruptRequested), and does not hand the signal on to
// lldb's, which would mark the command interrupted and make lldb drop its
// output ("... Interrupted.").  An interrupt lldb got some other way
// (SBCommandInterpreter::WasInterrupted) stops it too.  Then the
// diagnosis is of what is known.
struct UntilEndTick {
	lldb::SBDebugger *debugger = nullptr;   // set by PluginInitialize
	bool shown = false;
	uint64_t drawn = 0;                     // waited_ns of the last line
};
UntilEndTick g_until_end_tick;

int until_end_tick(void *ctx, uint64_t waited_ns, uint64_t timeout_ns, const char *what)
{
	auto *t = static_cast<UntilEndTick *>(ctx);
	FILE *f = t->debugger ? t->debugger->GetErrorFileHandle() : nullptr;
	bool tty = f && isatty(fileno(f));
	if (waited_ns == UINT64_MAX) {          // over: erase the line
		if (t->shown && tty) {
			fprintf(f, "\r\033[K");
			fflush(f);
		}
		t->shown = false;
		t->drawn = 0;
		return 0;
	}
	if (tty && waited_ns >= 1000000000ull && waited_ns - t->drawn >= 100000000ull) {
		fprintf(f, "\rargus: %s: %.1f s of %.0f s (Ctrl-C: diagnose now)\033[K", what,
			(double)waited_ns / 1e9, (double)timeout_ns / 1e9);
		fflush(f);
		t->shown = true;
		t->drawn = waited_ns;
	}
	return t->debugger && t->debugger->GetCommandInterpreter().WasInterrupted() ? 1 : 0;
}

// ---- the subcommands ---------------------------------------------------

struct Subcommand;
using Handler = bool (*)(const Subcommand &sc, lldb::SBDebugger d, Args args,
			 lldb::SBCommandReturnObject &result);

struct Subcommand {
	const char *name;
	Handler fn;
	const char *help;
	const char *syntax;
};

// Takes "--NAME VALUE" out of args; true if it was there.
bool take_opt(Args &args, const char *name, std::string &val)
{
	for (size_t i = 0; i < args.size(); i++) {
		if (args[i] != name)
			continue;
		if (i + 1 >= args.size())
			return false;
		val = args[i + 1];
		args.erase(args.begin() + (long)i, args.begin() + (long)i + 2);
		return true;
	}
	return false;
}

bool take_flag(Args &args, const char *name)
{
	for (size_t i = 0; i < args.size(); i++) {
		if (args[i] == name) {
			args.erase(args.begin() + (long)i);
			return true;
		}
	}
	return false;
}

// Takes "--until-end" or "--until-end=S" out of args; true if it was there.
bool take_until_end(Args &args)
{
	bool found = false;
	for (size_t i = 0; i < args.size();) {
		if (args[i] == "--until-end" || args[i].compare(0, 12, "--until-end=") == 0) {
			args.erase(args.begin() + (long)i);
			found = true;
		} else {
			i++;
		}
	}
	return found;
}

bool has(const Args &args, const char *name)
{
	for (auto &s : args)
		if (s == name)
			return true;
	return false;
}

std::string opt_value(const Args &args, const char *name)
{
	for (size_t i = 0; i + 1 < args.size(); i++)
		if (args[i] == name)
			return args[i + 1];
	return "";
}

bool help_of(const Subcommand &sc, lldb::SBCommandReturnObject &result)
{
	result.Printf("%s\n\nSyntax: %s", sc.help, sc.syntax);
	result.SetStatus(lldb::eReturnStatusSuccessFinishNoResult);
	return true;
}

// ---- the analysis session (analysis/argus_session.h) ---------------------

// The words of args as the C API's argv (they stay owned by args, which
// must outlive it; the API only reads them).
class Argv {
public:
	explicit Argv(const Args &args)
	{
		for (auto &s : args)
			v_.push_back(const_cast<char *>(s.c_str()));
		v_.push_back(nullptr);
	}
	int argc() const { return (int)v_.size() - 1; }
	char **argv() { return v_.data(); }

private:
	std::vector<char *> v_;
};

// One lldb command's query object: the snapshot's graph is built once for
// the hang list and the diagnosis (run_diagnose).
class Query {
public:
	Query() : q_(argus_session__new()) {}
	~Query() { argus_session__free(q_); }
	Query(const Query &) = delete;
	Query &operator=(const Query &) = delete;
	argus_session *get() const { return q_; }
	// A failed call as the CLI would have ended: exit 2 for bad words
	// (-EINVAL), else 1, and what it would have printed on stderr.
	CliResult failure(int rc) const
	{
		CliResult r;
		r.rc = rc == -EINVAL ? 2 : 1;
		r.err = argus_session__error(q_);
		if (r.err.empty())
			r.err = std::string("argus diagnose: ") + strerror(-rc) + "\n";
		return r;
	}

private:
	argus_session *q_;
};

// The last DUR of the running collector's ring into the session's trace,
// through the analysis session (argus_session__save_live).
bool snapshot(const std::string &last, const std::string &out, std::string &text, std::string &err)
{
	uint64_t ns = 0;
	if (argus_parse_duration(last.c_str(), &ns) || !ns) {
		err = "argus save: --last " + last + ": expected a duration like 30s, 2m, 1500ms\nusage: "
		      "argus save [--last DURATION] [-o FILE]";
		return false;
	}
	Query q;
	if (!q.get()) {
		err = "argus save: out of memory";
		return false;
	}
	int rc = argus_session__save_live(q.get(), out.c_str(), 0, ns, nullptr);
	if (rc) {
		err = rtrim(q.failure(rc).err);
		return false;
	}
	text = "argus: saved the last " + last + " of the collector's ring to " + out + "\n";
	return true;
}

bool cmd_status(const Subcommand &sc, lldb::SBDebugger, Args args, lldb::SBCommandReturnObject &result)
{
	if (wants_help(args))
		return help_of(sc, result);
	Args a{"status"};
	a.insert(a.end(), args.begin(), args.end());
	return finish(result, run_cli(a), sc.syntax);
}

bool cmd_save(const Subcommand &sc, lldb::SBDebugger, Args args, lldb::SBCommandReturnObject &result)
{
	if (wants_help(args))
		return help_of(sc, result);
	std::string last = default_last(), out, err;
	take_opt(args, "--last", last);
	if (!take_opt(args, "-o", out)) {
		out = g_session.trace(err);
		if (out.empty())
			return fail(result, "argus save: " + err);
	}
	Args a{"save", "--last", last, "-o", out};
	a.insert(a.end(), args.begin(), args.end());   // leftovers: the CLI rejects them
	CliResult r = run_cli(a);
	if (r.rc == 0 && out == g_session.trace_path())
		g_session.have_diagnose = false;   // new snapshot: old segment ids are gone
	return finish(result, r, sc.syntax);
}

// The session's copy of the user's --schema, if any, replaces --schema in
// args.  False after an error in result.
bool use_session_schema(const Subcommand &sc, Args &args, lldb::SBCommandReturnObject &result)
{
	std::string user, err;
	if (!has(args, "--schema"))
		return true;
	if (!take_opt(args, "--schema", user))
		return fail(result, std::string("argus ") + sc.name + ": --schema needs a FILE\nusage: " + sc.syntax);
	std::string path = g_session.schema(user, err);
	if (path.empty())
		return fail(result, std::string("argus ") + sc.name + ": " + err);
	args.push_back("--schema");
	args.push_back(path);
	return true;
}

// What hangs and diagnose share: the pid, the snapshot, the checked args.
struct DiagPrep {
	std::string pid;
	std::string trace;
	Args cli;                  // "hangs"|"diagnose" TRACE --pid PID args...
	bool attached = false;     // pid is the attached process's
	bool default_last = false; // the snapshot is ours, of default_last()
	lldb::SBProcess proc;
};

bool prep_diag(const Subcommand &sc, lldb::SBDebugger d, Args &args, DiagPrep &p,
	       lldb::SBCommandReturnObject &result)
{
	std::string last = default_last(), err;
	bool no_save = take_flag(args, "--no-save");
	p.default_last = !no_save && !has(args, "--last");
	if (has(args, "--last") && !take_opt(args, "--last", last))
		return fail(result, std::string("argus ") + sc.name + ": --last needs a DURATION\nusage: " + sc.syntax);
	p.proc = attached_process(d);
	if (has(args, "--pid")) {
		if (!take_opt(args, "--pid", p.pid))
			return fail(result, std::string("argus ") + sc.name + ": --pid needs a PID\nusage: " + sc.syntax);
	} else {
		if (!process_alive(p.proc))
			return fail(result, std::string("argus ") + sc.name +
					    ": no process: attach to the hung app first (process attach --pid PID), "
					    "or give --pid PID");
		p.pid = std::to_string(p.proc.GetProcessID());
	}
	p.attached = process_alive(p.proc) && std::to_string(p.proc.GetProcessID()) == p.pid;
	p.trace = g_session.trace(err);
	if (p.trace.empty())
		return fail(result, std::string("argus ") + sc.name + ": " + err);
	p.cli = {sc.name, p.trace, "--pid", p.pid};
	p.cli.insert(p.cli.end(), args.begin(), args.end());

	// the session's flag check first: a bad flag costs no snapshot
	{
		Query q;
		Argv av(p.cli);
		int rc = q.get() ? argus_session__check_words(q.get(), av.argc(), av.argv()) : 0;
		if (rc == -EINVAL)
			return fail(result, rtrim(with_plugin_usage(q.failure(rc).err, sc.syntax)));
	}
	if (!use_session_schema(sc, p.cli, result))
		return false;
	if (no_save) {
		if (!g_session.have_trace())
			return fail(result, std::string("argus ") + sc.name +
					    ": --no-save, but there is no session trace yet: run argus save first");
		return true;
	}
	std::string text;
	if (!snapshot(last, p.trace, text, err))
		return fail(result, err);
	g_session.have_diagnose = false;
	g_session.snapshot_at = now_s();
	// a snapshot just taken is of this running system: the diagnosis may
	// ask /proc who holds the other end of a wait (with --no-save, the
	// session trace is live by the CLI's own rule: this host, this boot,
	// at most 120 s old; diag_front_resolve_live)
	if (!strcmp(sc.name, "diagnose"))
		p.cli.push_back("--live");
	if (!has(p.cli, "--json") && !has(p.cli, "--dot"))   // keep JSON/DOT output clean
		result.PutCString(text.c_str(), (int)text.size());
	return true;
}

bool cmd_hangs(const Subcommand &sc, lldb::SBDebugger d, Args args, lldb::SBCommandReturnObject &result)
{
	if (wants_help(args))
		return help_of(sc, result);
	DiagPrep p;
	if (!prep_diag(sc, d, args, p, result))
		return false;
	Query q;
	Argv av(p.cli);
	argus_hang_list *l = nullptr;
	int rc = q.get() ? argus_session__list_hangs(q.get(), av.argc(), av.argv(), &l) : -ENOMEM;
	CliResult r = rc ? q.failure(rc) : CliResult();
	if (!rc) {
		r.rc = 0;
		r.out = l->text;
	}
	argus_hang_list__free(l);
	return finish(result, r, sc.syntax);
}

// The session's picks (argus pick) as --pick N,N... for the CLI.
void add_picks(Args &a)
{
	if (g_session.picks.empty())
		return;
	std::string list;
	for (auto &s : g_session.picks)
		list += (list.empty() ? "" : ",") + s;
	a.push_back("--pick");
	a.push_back(list);
}

bool run_diagnose(const Subcommand &sc, lldb::SBDebugger d, Query &q, const DiagPrep &p,
		  lldb::SBCommandReturnObject &result)
{
	Args a = p.cli;
	add_picks(a);
	if (!q.get())
		return fail(result, "argus diagnose: out of memory");
	bool text_output = !has(a, "--json") && !has(a, "--dot");
	Argv av(a);
	argus_diag_report *rep = nullptr;
	g_symbols.frames = 0;
	int rc = argus_session__diagnose(q.get(), av.argc(), av.argv(), &rep);
	// the second snapshot's session, made only when needed (q keeps the
	// first snapshot's graph, cached by the same path)
	std::optional<Query> wide;
	Query *qq = &q;
	if (rc == -ENODATA && p.default_last) {
		// the thread slept through the whole snapshot: attached to a
		// hang older than it.  Once, a longer one (the ring permitting)
		std::string text, err, why = rtrim(q.failure(rc).err);
		if (!snapshot(kWideLast, p.trace, text, err))
			return fail(result, err);
		if (text_output) {
			result.Printf("%s\n", why.c_str());
			result.PutCString(text.c_str(), (int)text.size());
		}
		g_session.snapshot_at = now_s();
		qq = &wide.emplace();
		rc = qq->get() ? argus_session__diagnose(qq->get(), av.argc(), av.argv(), &rep) : -ENOMEM;
	}
	CliResult r = rc ? qq->failure(rc) : CliResult();
	if (!rc) {
		r.rc = 0;
		r.out = rep->text;
		if (text_output && g_symbols.frames)
			r.out += symbols_line();
	}
	bool ok = finish(result, r, sc.syntax);
	if (ok) {
		g_session.last_diagnose = p.cli;
		if (take_until_end(g_session.last_diagnose)) {
			// the wait replaced the session trace: pick and report go
			// on with the hang it waited for, found by its middle
			const argus_hang &h = rep->diag.hang;
			std::string tid;
			take_opt(g_session.last_diagnose, "--tid", tid);
			g_session.last_diagnose.push_back("--tid");
			g_session.last_diagnose.push_back(std::to_string(h.tid));
			g_session.last_diagnose.push_back("--at");
			g_session.last_diagnose.push_back(std::to_string(h.start + (h.end - h.start) / 2));
			g_session.snapshot_at = now_s();
		}
		g_session.have_diagnose = true;
		g_session.choices.clear();
		for (uint32_t i = 0; i < rep->nchoices; i++)
			g_session.choices.push_back(rep->choices[i].text);
		if (p.attached && text_output)
			print_live(d, p.proc, *rep, result);
	}
	argus_diag_report__free(rep);
	return ok;
}

bool cmd_diagnose(const Subcommand &sc, lldb::SBDebugger d, Args args, lldb::SBCommandReturnObject &result)
{
	if (wants_help(args))
		return help_of(sc, result);
	DiagPrep p;
	std::string picks;
	Args probe = args;
	if (take_until_end(probe) && has(args, "--no-save"))
		return fail(result, std::string("argus diagnose: --until-end takes fresh snapshots: not with "
						"--no-save\nusage: ") + sc.syntax);
	if (!prep_diag(sc, d, args, p, result))
		return false;
	g_session.picks.clear();
	if (take_opt(p.cli, "--pick", picks)) {
		for (size_t b = 0; b <= picks.size();) {
			size_t e = picks.find(',', b);
			if (e == std::string::npos)
				e = picks.size();
			if (e > b)
				g_session.picks.push_back(picks.substr(b, e - b));
			b = e + 1;
		}
	}
	// Which hang is libargus's one rule (argus_diag__choose_hang): on
	// this fresh snapshot of the running system (--live), the one still
	// going, from 100 ms, whatever lldb sees the thread in now (a reply
	// wait inside poll() is a hang); else the longest.
	Query q;
	return run_diagnose(sc, d, q, p, result);
}

bool cmd_pick(const Subcommand &sc, lldb::SBDebugger d, Args args, lldb::SBCommandReturnObject &result)
{
	if (wants_help(args))
		return help_of(sc, result);
	bool undo = args.size() == 1 && args[0] == "--undo";
	if (args.size() > 1 || (args.size() == 1 && !undo &&
				(args[0].find_first_not_of("0123456789") != std::string::npos || args[0].empty() ||
				 args[0] == "0")))
		return fail(result, std::string("argus pick: give one choice, a number from the report's "
						"\"(--pick N)\" lines, or --undo\nusage: ") + sc.syntax);
	if (!g_session.have_diagnose || !g_session.have_trace())
		return fail(result, "argus pick: no diagnosis to answer: run argus diagnose first");
	if (args.empty()) {
		// the dialog's question: what the last diagnosis chose by default
		std::string answered;
		for (auto &a : g_session.picks)
			answered += (answered.empty() ? "" : ",") + a;
		result.Printf("answers so far: %s\n", answered.empty() ? "none (every choice took its default)"
								 : answered.c_str());
		if (g_session.choices.empty()) {
			result.Printf("the last diagnosis had no choice left to answer: every step back had one "
				      "way in\n");
		} else {
			result.Printf("the last diagnosis chose by default where the slice had two or more ways "
				      "in; the other ways:\n");
			for (auto &c : g_session.choices)
				result.Printf("%s\n", c.c_str());
			result.Printf("answer the first of these choices with `argus pick N` (N from its "
				      "\"(--pick N)\"): the diagnosis runs again along it\n");
		}
		result.SetStatus(lldb::eReturnStatusSuccessFinishResult);
		return true;
	}
	if (undo) {
		if (g_session.picks.empty())
			return fail(result, "argus pick --undo: no answer to take back");
		g_session.picks.pop_back();
	}
	DiagPrep p;
	p.cli = g_session.last_diagnose;
	p.trace = g_session.trace_path();
	bool was_live = take_flag(p.cli, "--live");
	if (was_live && now_s() - g_session.snapshot_at <= kLiveMaxAgeS) {
		p.cli.push_back("--live");
	} else if (was_live) {
		// older than argus pick trusts: the trace alone (without
		// --no-live the CLI's own 120 s rule could still go live)
		p.cli.push_back("--no-live");
		result.Printf("argus: the snapshot is %.0f s old: no live /proc lookup of who holds a "
			      "wait's other end this time (argus diagnose takes a fresh one)\n",
			      now_s() - g_session.snapshot_at);
	}
	p.pid = opt_value(p.cli, "--pid");
	p.proc = attached_process(d);
	p.attached = process_alive(p.proc) && std::to_string(p.proc.GetProcessID()) == p.pid;
	if (!undo)
		g_session.picks.push_back(args[0]);
	static const Subcommand diag = {"diagnose", nullptr, "", "argus pick [N | --undo]\n"};
	Query q;
	return run_diagnose(diag, d, q, p, result);
}

// show, similar, slice, diff, export: the same CLI command on the session's
// working trace (FILE and the session schema are supplied).
bool cmd_on_trace(const Subcommand &sc, lldb::SBDebugger, Args args, lldb::SBCommandReturnObject &result)
{
	if (wants_help(args))
		return help_of(sc, result);
	if (!g_session.have_trace())
		return fail(result, std::string("argus ") + sc.name +
				    ": no session trace yet: run argus diagnose (or argus save) first");
	Args a{sc.name, g_session.trace_path()};
	a.insert(a.end(), args.begin(), args.end());
	if (!use_session_schema(sc, a, result))
		return false;
	return finish(result, run_cli_stacks(a, strcmp(sc.name, "export") && !has(a, "--json")), sc.syntax);
}

// report: the last diagnosis (its trace, hang, flags and picks) drawn as
// an HTML page by the session (argus_session__report), as `argus report`.
bool cmd_report(const Subcommand &sc, lldb::SBDebugger, Args args, lldb::SBCommandReturnObject &result)
{
	if (wants_help(args))
		return help_of(sc, result);
	if (!g_session.have_diagnose)
		return fail(result, "argus report: no diagnosis yet: run argus diagnose first (the report draws it)");
	Args a = g_session.last_diagnose;
	a[0] = "report";
	take_flag(a, "--json");
	take_flag(a, "--dot");
	add_picks(a);
	a.insert(a.end(), args.begin(), args.end());   // -o FILE [--force]; the session checks
	Query q;
	Argv av(a);
	char *summary = nullptr;
	int rc = q.get() ? argus_session__report(q.get(), av.argc(), av.argv(), &summary) : -ENOMEM;
	CliResult r = rc ? q.failure(rc) : CliResult();
	if (!rc) {
		r.rc = 0;
		r.out = summary;
	}
	free(summary);
	return finish(result, r, sc.syntax);
}

// step, flag, step-diff, watch: step_cmds.cpp (the thread is stepped
// through lldb, with the step front end's parser and output).
bool cmd_stepping(const Subcommand &sc, lldb::SBDebugger d, Args args, lldb::SBCommandReturnObject &result)
{
	if (wants_help(args))
		return help_of(sc, result);
	return finish(result, argus_lldb::stepping_command(d, sc.name, args), sc.syntax);
}

const Subcommand kSubcommands[] = {
	{"status", cmd_status, "Show the always-on collector's state: event rates, ring fill, lost events, CPU.",
	 "argus status\n"},
	{"save", cmd_save,
	 "Snapshot the collector's ring into the session's working trace (or FILE). "
	 "DURATION like 30s, 2m (default 2m).",
	 "argus save [--last DURATION] [-o FILE]\n"},
	{"hangs", cmd_hangs,
	 "List the hangs of the attached process's UI thread (the main thread unless --tid) "
	 "in a fresh snapshot of the last 2 minutes.",
	 "argus hangs [--tid TID] [--threshold MS] [--json] [--pid PID] [--last DURATION] [--no-save]\n"},
	{"diagnose", cmd_diagnose,
	 "Name the thread, in any process, that caused the attached process's hang: snapshots the "
	 "last 2 minutes, takes the hang in progress (else the longest, or the one at --at / --mark), "
	 "then shows the report's threads as lldb sees them now.  --until-end[=SECONDS] (default 60): "
	 "first wait, the process kept stopped, until what the hung thread waits for happens (the "
	 "lock released, its fd readable, its futex word changed...), then snapshot again and "
	 "diagnose with it; Ctrl-C stops the wait early.",
	 "argus diagnose [--tid TID] [--at TIME | --mark TEXT | --until-end[=SECONDS]] [--depth N]\n"
	 "               [--threshold MS] [--pick N,N...] [--json | --dot] [--pid PID] [--last DURATION]\n"
	 "               [--no-save] [--no-holder-rules]\n"},
	{"show", cmd_on_trace, "One segment of the session trace in full (ID as diagnose printed it: #261 or 261).",
	 "argus show ID [--json] [--schema FILE] [--no-split]\n"},
	{"similar", cmd_on_trace, "Segments of the same thread that did the same thing as segment ID.",
	 "argus similar ID [--max N] [--json] [--schema FILE] [--no-split]\n"},
	{"slice", cmd_on_trace, "Walk back from segment ID along who made it run.",
	 "argus slice ID [--pick N,N...] [--stop TID] [--json] [--schema FILE] [--no-split]\n"},
	{"diff", cmd_on_trace, "Two segments side by side: a normal run and the hang.",
	 "argus diff ID_NORMAL ID_HANG [--json] [--schema FILE] [--no-split]\n"},
	{"pick", cmd_pick,
	 "Steer the last diagnosis where its slice had two or more ways in: without N, list the ways "
	 "it did not take; with N, take way N at the next choice and diagnose again; --undo takes "
	 "the last answer back.",
	 "argus pick [N | --undo]\n"},
	{"export", cmd_on_trace,
	 "Write the session trace's event graph for Perfetto (ui.perfetto.dev), or as Graphviz DOT "
	 "(--format dot; narrow it with --pid/--from/--to; argus diagnose --dot gives the diagnosis's "
	 "own subgraph).",
	 "argus export -o OUT [--format perfetto|dot] [--from SEC] [--to SEC] [--pid PID...] [--kernel]\n"},
	{"report", cmd_report,
	 "Write the last diagnosis as one self-contained HTML page: the threads of its path and chain "
	 "on a timeline of the normal run and of the hang, the edges as arrows, the verdict and the "
	 "culprits' stacks (argus report in the CLI).",
	 "argus report -o FILE.html [--force]\n"},
	{"step", cmd_stepping,
	 "Single-step the selected thread (or --tid) of the stopped process through lldb, printing or "
	 "recording each instruction: its registers changed, memory operands, symbol.  --until COND: "
	 "'rip == ADDR', 'mem32(ADDR) != 0', 'left FUNC'.  The process stays stopped.",
	 "argus step [--tid TID] [--count N | --until COND] [--record FILE] [--syscall-timeout MS] [--json]\n"},
	{"flag", cmd_stepping,
	 "Step the selected spinning thread (or --tid) through lldb until its loop has come round, and "
	 "print the data flag it waits for: address, size, symbol, value, the instruction reading it.  "
	 "Then: argus watch --addr ADDR --reader TID, or give --watch to arm it at once.",
	 "argus flag [--tid TID] [--normal FILE] [--record FILE] [--max N] [--timeout SEC] [--json] [--watch]\n"},
	{"step-diff", cmd_stepping, "Where two step recordings (normal, hang) first take different paths.",
	 "argus step-diff A B [--json]\n"},
	{"watch", cmd_stepping,
	 "Hardware write watchpoints on a flag of the attached process (or --pid), armed by the running "
	 "collector: each write becomes a trace event and a dataflag edge.",
	 "argus watch --addr ADDR [--len N] [--pid PID] [--reader TID] | --list | --remove ID | --remove --pid PID | "
	 "--remove --all\n"},
};

class Command : public lldb::SBCommandPluginInterface {
public:
	explicit Command(const Subcommand &sc) : sc_(sc) {}
	bool DoExecute(lldb::SBDebugger d, char **command, lldb::SBCommandReturnObject &result) override
	{
		SyncGuard sync(d);
		return sc_.fn(sc_, d, to_args(command), result);
	}

private:
	const Subcommand &sc_;
};

void say(lldb::SBDebugger d, const char *fmt, const char *a, const char *b)
{
	FILE *f = d.GetErrorFileHandle();
	fprintf(f ? f : stderr, fmt, a, b);
	fflush(f ? f : stderr);
}

// The real path of the shared object that holds addr ("" if unknown).
std::string object_of(const void *addr)
{
	Dl_info info;
	char real[PATH_MAX];
	if (!dladdr(addr, &info) || !info.dli_fname)
		return "";
	return realpath(info.dli_fname, real) ? real : info.dli_fname;
}

// Where argusd (which `argus save` talks to, and `argus start` runs) lives
// for the plugin at path self: the install's bin dir, reached through the
// relative lib -> bin path CMake computed (lib/x86_64-linux-gnu -> ../../bin),
// else ../bin as in the build tree.
std::string bin_dir_of(const std::string &self)
{
	std::string lib = self.substr(0, self.rfind('/'));
	for (const char *rel : {ARGUS_LIB_TO_BIN, "../bin"}) {
		std::string d = lib + "/" + rel;
		if (access((d + "/argusd").c_str(), X_OK) == 0)
			return d;
	}
	return lib + "/../bin";   // not there: the CLI's error names this path
}

}  // namespace

// Marks this copy of the plugin, so a second copy (another path) can tell.
extern "C" __attribute__((visibility("default"))) int argus_lldb_plugin_instance;
int argus_lldb_plugin_instance;

bool lldb::PluginInitialize(lldb::SBDebugger debugger)
{
	std::string self = object_of(reinterpret_cast<void *>(&lldb::PluginInitialize));
	// A Python host loaded liblldb RTLD_LOCAL: make the one that called us
	// global before the first SB call binds (host_liblldb.c).  Nothing to
	// do, and no SB call made, when none is found: say so and refuse.
	char lib_path[PATH_MAX] = "";
	if (argus_lldb_host__promote(__builtin_return_address(0), lib_path, sizeof(lib_path))) {
		fprintf(stderr, "argus: refusing to load: no liblldb in this process to bind the SB API to\n");
		return false;
	}
	// The SB API is bound to the loading lldb's own liblldb (the plugin
	// does not pull in one of its own: lldb-plugin/CMakeLists.txt), so
	// this is the host's version, asked before any other SB call.
	const char *version = lldb::SBDebugger::GetVersionString();
	if (!version || !strstr(version, kWantVersion)) {
		std::string v = version ? version : "an unknown version";
		v = v.substr(0, v.find('\n'));
		std::string lib = lib_path;
		say(debugger,
		    "argus: refusing to load: this plugin is built for LLDB 16, but this debugger is %s (%s); "
		    "use lldb-16, or rebuild Argus against this LLDB\n",
		    v.c_str(), lib.empty() ? "liblldb not found" : lib.c_str());
		return false;
	}
	void *first = dlsym(RTLD_DEFAULT, "argus_lldb_plugin_instance");
	if (g_loaded || (first && first != &argus_lldb_plugin_instance)) {
		say(debugger,
		    "argus: the plugin is already loaded in this lldb (%s%s); its `argus` commands are "
		    "unchanged, nothing to do\n",
		    g_loaded ? self.c_str() : "another copy", g_loaded ? "" : ", not this one");
		return false;
	}
	std::string bin = bin_dir_of(self);
	argus_session__set_bin_dir(bin.c_str());
	argus_lldb::set_argus_binary(bin + "/argus");
	g_symbols.debugger = new lldb::SBDebugger(debugger);
	argus_session__set_symbolizer(lldb_symbolize, &g_symbols);
	g_until_end_tick.debugger = g_symbols.debugger;
	argus_session__set_until_end_tick(until_end_tick, &g_until_end_tick);

	lldb::SBCommandInterpreter ci = debugger.GetCommandInterpreter();
	lldb::SBCommand argus = ci.AddMultiwordCommand(
		"argus", "Argus: why is this app hung?  Causal tracing from the always-on collector "
			 "(argus start, as root) for the attached process.");
	if (!argus.IsValid()) {
		say(debugger, "argus: cannot add the `argus` command (%s%s): another command has that name\n",
		    self.c_str(), "");
		return false;
	}
	for (const Subcommand &sc : kSubcommands)
		argus.AddCommand(sc.name, new Command(sc), sc.help, sc.syntax);
	g_loaded = true;
	return true;
}
