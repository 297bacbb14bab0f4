// remote_step.cpp - single steps straight to lldb-server.
//
// Why: SBThread::StepInstruction goes through lldb's thread plans, and
// each step costs about four round trips to lldb-server (the step, then
// jThreadsInfo, register and stack reads for the new stop) plus the
// public stop's bookkeeping: some 1,700 steps a second here.  The step
// itself is one packet, `vCont;s:TID`, whose stop reply (`T05...`) already
// carries every general register of the thread.  Sent with `process plugin
// packet send`, it steps the thread with the others left stopped (all-stop
// mode: threads without an action stay put), about 5,000 a second
// measured here, registers included.
//
// The price: lldb does not see these steps.  Its caches still describe
// the stop before them:
//   - registers and frames of the thread: `register write rip <pc>` (the
//     value it has) makes lldb drop both (the command flushes the thread
//     after any register write);
//   - memory it read since that stop (the stack it unwound, the code it
//     showed): only a new private stop clears lldb's memory cache.  A
//     call of pthread_self() in the thread (an expression: the thread runs
//     a few instructions and stops again, registers restored) is that
//     stop.  Measured: before it, SBProcess::ReadMemory returned a global
//     as it was 200 steps earlier; after it, the value /proc/PID/mem had.
// Before lldb's own step (or RunToAddress) only the registers need the
// flush: the step's stop is a private stop, which clears the memory
// cache before lldb reads memory again (a syscall every few instructions,
// as in a sched_yield spin, would otherwise pay a call in the thread at
// each).  When the command ends, both.  ReadMemory between remote steps
// is avoided (step_backend.cpp, read_mem).
//
// What stays with lldb's own step: a syscall (it may block past the
// packet timeout; the caller's watchdog works with lldb's step), the vDSO
// (run out of, not stepped), an int3 at the pc (a breakpoint only lldb can
// step over), and a signal lldb reported.  A signal that stops a remote
// step is handed on with the next remote step (`vCont;Sxx:TID`), as lldb
// would on its next step.

#include "remote_step.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

namespace argus_lldb {
namespace {

// The text after "response: " of `process plugin packet send P`.
bool send_packet(RemoteStep *rs, const char *packet, std::string &reply)
{
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "process plugin packet send %s", packet);
	lldb::SBCommandReturnObject r;
	rs->ci.HandleCommand(cmd, r);
	if (!r.Succeeded() || !r.GetOutput())
		return false;
	const char *out = r.GetOutput();
	const char *p = strstr(out, "response: ");
	if (!p)
		return false;
	p += strlen("response: ");
	const char *end = strchr(p, '\n');
	reply.assign(p, end ? (size_t)(end - p) : strlen(p));
	return true;
}

int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

// Little-endian target bytes in hex ("792e341200000000") as a number; false
// for "xx" (unavailable) or anything longer than 8 bytes.
bool le_hex(const char *s, size_t n, uint64_t *v)
{
	if (n == 0 || n % 2 || n > 16)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hexval(s[i]), lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		x |= (uint64_t)(hi << 4 | lo) << (4 * i);
	}
	*v = x;
	return true;
}

// The value of key in a "k:v;k:v;" list, or "" (a copy: short values).
std::string field(const std::string &s, const char *key)
{
	std::string k = std::string(";") + key + ":";
	size_t at = s.find(k);
	if (at == std::string::npos)
		return "";
	at += k.size();
	size_t end = s.find(';', at);
	return s.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace

void remote_step_open(RemoteStep *rs, lldb::SBProcess proc, uint32_t tid)
{
	rs->ok = false;
	const char *off = getenv("ARGUS_STEP_REMOTE");
	if (off && !strcmp(off, "0"))
		return;
	const char *plugin = proc.GetPluginName();
	if (!plugin || strcmp(plugin, "gdb-remote"))
		return;
	rs->ci = proc.GetTarget().GetDebugger().GetCommandInterpreter();
	rs->pid = (uint32_t)proc.GetProcessID();
	rs->tid = tid;
	for (int &r : rs->reg_of)
		r = -1;
	// the general registers come first in lldb-server's numbering; stop
	// at the first register of another set
	int mapped = 0;
	for (int n = 0; n < 64; n++) {
		char q[32];
		std::string reply;
		snprintf(q, sizeof(q), "qRegisterInfo%x", n);
		if (!send_packet(rs, q, reply) || reply.empty() || reply[0] == 'E')
			break;
		std::string r = ";" + reply;
		if (field(r, "set") != "General Purpose Registers")
			break;
		std::string name = field(r, "name");
		int reg = name == "rflags" ? ARGUS_REG_EFLAGS : argus_step_reg__by_name(name.c_str());
		if (reg >= 0 && reg != ARGUS_REG_ORIG_RAX) {
			rs->reg_of[n] = reg;
			mapped++;
		}
	}
	// rax..r15 and rip at least, as the lldb path demands
	rs->ok = mapped >= 17;
}

RemoteStepResult remote_step(RemoteStep *rs, int sig, int *stop_sig)
{
	char pkt[48];
	std::string reply;
	if (sig)
		snprintf(pkt, sizeof(pkt), "vCont;S%02x:%x", (unsigned)sig & 0xff, rs->tid);
	else
		snprintf(pkt, sizeof(pkt), "vCont;s:%x", rs->tid);
	*stop_sig = 0;
	rs->dirty = true;   // whatever came back, the thread may have moved
	if (!send_packet(rs, pkt, reply) || reply.size() < 3 || reply[0] != 'T')
		return kRemoteError;   // W/X: the process ended; E..: refused
	int signo = hexval(reply[1]) << 4 | hexval(reply[2]);
	std::string rest = ";" + reply.substr(3);
	// the stop must be our thread's ("p<pid>.<tid>" or "<tid>", hex)
	std::string th = field(rest, "thread");
	size_t dot = th.find('.');
	if (strtoul(th.c_str() + (dot == std::string::npos ? 0 : dot + 1), nullptr, 16) != rs->tid)
		return kRemoteError;
	// "NN:value;" pairs: the registers, by remote number
	struct argus_step_regs regs = rs->regs;
	bool have_pc = false;
	size_t i = 1;
	while (i < rest.size()) {
		size_t colon = rest.find(':', i), semi = rest.find(';', i);
		if (colon == std::string::npos || semi == std::string::npos || colon > semi)
			break;
		if (colon - i == 2 && hexval(rest[i]) >= 0 && hexval(rest[i + 1]) >= 0) {
			int n = hexval(rest[i]) << 4 | hexval(rest[i + 1]);
			uint64_t v;
			if (n < 64 && rs->reg_of[n] >= 0 &&
			    le_hex(rest.c_str() + colon + 1, semi - colon - 1, &v)) {
				regs.r[rs->reg_of[n]] = v;
				have_pc |= rs->reg_of[n] == ARGUS_REG_RIP;
			}
		}
		i = semi + 1;
	}
	if (!have_pc)
		return kRemoteError;
	rs->regs = regs;
	rs->pc = regs.r[ARGUS_REG_RIP];
	if (signo != SIGTRAP) {
		// stopped for a signal before the instruction ran
		*stop_sig = signo;
		return kRemoteSignal;
	}
	// lldb-server moved the pc back onto its breakpoint: not run
	if (field(rest, "reason") == "breakpoint")
		return kRemoteBreakpoint;
	return kRemoteStepped;
}

lldb::SBValue eval_pthread_self(lldb::SBThread th)
{
	lldb::SBExpressionOptions o;
	o.SetTryAllThreads(false);        // only this thread runs, briefly
	o.SetStopOthers(true);
	o.SetTimeoutInMicroSeconds(2000000);
	o.SetUnwindOnError(true);
	o.SetIgnoreBreakpoints(true);
	o.SetSuppressPersistentResult(true);
	o.SetLanguage(lldb::eLanguageTypeC);
	return th.GetFrameAtIndex(0).EvaluateExpression("(unsigned long)pthread_self()", o);
}

int remote_step_flush(RemoteStep *rs, bool memory)
{
	if (!rs->dirty)
		return 0;
	lldb::SBProcess proc = rs->ci.GetProcess();
	lldb::SBThread th = proc.GetThreadByID(rs->tid);
	if (!th.IsValid())
		return -ESRCH;
	// the register write's value is what the thread has: the one thing
	// it does is make lldb drop the thread's registers and frames.  The
	// command runs in the stepped thread's context, given with it: the
	// interpreter's own (the selected thread, or the context the running
	// `argus` command was given) can be another thread, whose pc this
	// would overwrite (CI: `argus step --tid WORKER` in lldb moved the main
	// thread's pc to the worker's, and the app crashed after detach)
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "register write rip 0x%llx", (unsigned long long)rs->pc);
	lldb::SBExecutionContext ctx(th);
	lldb::SBCommandReturnObject r;
	rs->ci.HandleCommand(cmd, ctx, r);
	int rc = r.Succeeded() ? 0 : -EIO;
	rs->dirty = false;
	if (!memory)
		return rc;
	// a private stop clears lldb's memory cache: a call in the thread
	lldb::SBValue v = eval_pthread_self(th);
	if (!v.IsValid() || v.GetError().Fail())
		rc = -EIO;
	return rc;
}

}  // namespace argus_lldb
