// step_backend.cpp - the step engine (step/) inside lldb: a struct
// argus_step_backend whose registers, memory and single step come from
// lldb, which owns the process (a second tracer's PTRACE_SEIZE would get
// EPERM: lldb-server is the tracer).
//
//   get_regs  frame 0's "General Purpose Registers" set (the children's
//             indices are looked up by name once per stepper).  lldb 16
//             does not show three fields of user_regs_struct:
//               orig_rax  from /proc/PID/task/TID/syscall: the number of
//                         the syscall the thread is stopped in (the kernel
//                         keeps it at the stop after a syscall instruction
//                         too), -1 when it is not in one.  The engine needs
//                         it to see a sleep it must restart;
//               fs_base   the thread pointer: glibc's pthread_self() (fs:0x10
//                         holds it) evaluated once per thread in the target
//                         and cached, checked against the TCB's two self
//                         pointers; 0 when it cannot be had.  fs: operands
//                         (TLS, the stack guard) need it for their address;
//               gs_base   0: x86-64 user space does not use gs.
//   read_mem  /proc/PID/mem (root may read a process another tracer
//             owns): a pread, where SBProcess::ReadMemory is one remote
//             packet to lldb-server, about one per step for the code bytes
//             alone.  A read that holds an int3 byte (0xcc) goes through
//             ReadMemory instead, which hides lldb's own breakpoint traps;
//             so does one /proc refuses.  A read that fails across a
//             mapping's end is retried up to the page boundary, so the
//             engine sees a short read.
//   step      a plain instruction: one vCont;s packet to lldb-server past
//             lldb (remote_step.cpp: why, and how lldb is flushed after),
//             its stop reply's registers are get_regs' answer.  Else:
//             SBThread::StepInstruction(false): lldb single-steps the
//             thread with the others stopped (lldb's own step-inst plan).
//             A stop for a signal (lldb stops on it: SIGSEGV, or one the
//             user set to stop) is reported in stop->sig and the step is
//             repeated, so the signal is delivered as the thread would
//             have had it and the instruction runs (or the handler's first
//             one is where it lands, as with ptrace).  A syscall step is
//             watched: past syscall_ms a watchdog thread sends the thread a
//             SIGSTOP, which lldb reports as a stop and does not pass on;
//             the thread is left stopped inside the call, which the kernel
//             restarts when the process continues, and the step returns
//             -ETIMEDOUT.
//   close     nothing to undo: lldb keeps the process stopped.
//
// Everything runs on the thread that runs the lldb command, with the
// debugger synchronous (the plugin's SyncGuard), so a step returns once
// the thread has stopped again; only the watchdog runs beside it.

#include "step_backend.h"

#include <algorithm>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "remote_step.h"

namespace argus_lldb {
namespace {

const int kSignalRetries = 4;     // signal stops before giving up on one step

struct Backend {
	lldb::SBProcess proc;
	lldb::SBThread thread;
	uint32_t pid = 0, tid = 0;
	uint32_t syscall_ms = 5000;
	// GPR set child index -> enum argus_step_reg, built at the first read
	std::vector<std::pair<uint32_t, int>> map;
	int child_of[ARGUS_STEP_NREGS];   // the reverse, -1 if lldb has none
	// what the next get_regs must read (see get_regs)
	struct argus_step_regs last;      // the registers read last
	bool have_last = false;
	bool next_full = true;
	uint32_t next_writes = 0;         // argus_step_stop.writes of the step
	int next_known = -1;              // argus_step_stop.known_reg of the step
	uint64_t next_known_val = 0;
	bool after_syscall = true;        // orig_rax: /proc (at the start too)
	unsigned since_full = 0;
	uint64_t fs_base = 0;
	uint64_t vdso_lo = 0, vdso_hi = 0;   // [vdso] mapping, [lo, hi)
	int mem_fd = -1;                      // /proc/PID/mem, -1 if not opened
	bool check_known = false;             // ARGUS_STEP_CHECK_KNOWN=1
	unsigned long checked_known = 0, wrong_known = 0;
	// steps sent to lldb-server past lldb (remote_step.cpp)
	RemoteStep rs;
	bool remote_regs = false;   // the last step was remote: rs.regs hold them
	int remote_sig = 0;         // a signal a remote step stopped for, to hand on
	std::vector<uint64_t> bp_addrs;   // lldb's breakpoint locations, sorted

	// the syscall watchdog
	std::mutex m;
	std::condition_variable cv;
	std::thread dog;
	bool armed = false;          // a syscall step is under way
	bool quit = false;
	bool fired = false;          // it interrupted this step
	std::chrono::steady_clock::time_point deadline;

	~Backend()
	{
		if (check_known)
			fprintf(stderr, "argus: step check: %lu known register values checked, %lu wrong\n",
				checked_known, wrong_known);
		if (mem_fd >= 0)
			close(mem_fd);
		if (dog.joinable()) {
			{
				std::lock_guard<std::mutex> l(m);
				quit = true;
			}
			cv.notify_all();
			dog.join();
		}
	}

	void watchdog()
	{
		std::unique_lock<std::mutex> l(m);
		while (!quit) {
			if (!armed) {
				cv.wait(l);
				continue;
			}
			if (cv.wait_until(l, deadline) == std::cv_status::timeout && armed && !fired &&
			    std::chrono::steady_clock::now() >= deadline) {
				fired = true;
				// the command's thread is inside StepInstruction,
				// waiting for the stop this brings: a SIGSTOP to
				// the stepped thread alone.  Not SendAsyncInterrupt:
				// lldb-server's own SIGSTOP then stays pending on
				// the thread (the step's trap is reported first),
				// and after detach it stops the whole process
				// (measured: both threads left in state T).  Ours is
				// taken at the syscall, reported as a SIGSTOP stop,
				// and lldb does not pass SIGSTOP on (pass=false).
				syscall(SYS_tgkill, (pid_t)pid, (pid_t)tid, SIGSTOP);
			}
		}
	}
};

// The thread pointer of each thread seen, by pid and tid: evaluating an
// expression costs a compile, and a thread's fs_base does not change.
std::map<std::pair<uint32_t, uint32_t>, uint64_t> g_fs_base;

// orig_rax as ptrace would give it: the first field of
// /proc/PID/task/TID/syscall ("202 0x.. ...", "-1 sp pc", "running").
uint64_t orig_rax(uint32_t pid, uint32_t tid)
{
	char path[64], buf[64] = "";
	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return (uint64_t)-1;
	bool ok = fgets(buf, sizeof(buf), f) != nullptr;
	fclose(f);
	char *end;
	long nr = ok ? strtol(buf, &end, 10) : -1;
	return ok && end != buf && nr >= 0 ? (uint64_t)nr : (uint64_t)-1;
}

int read_reg(lldb::SBValue &gpr, uint32_t child, uint64_t *val)
{
	lldb::SBValue v = gpr.GetChildAtIndex(child);
	lldb::SBError err;
	if (!v.IsValid())
		return -EIO;
	*val = v.GetValueAsUnsigned(err, 0);
	return err.Fail() ? -EIO : 0;
}

// Each register lldb does not have yet is one `p` packet to lldb-server
// (its stop reply carries only rip, rsp and rbp), some 50 us: all of them
// would make a step three times slower than lldb's own step-inst.  So
// after a plain step only the registers the instruction writes (the
// engine's decode: argus_step_stop.writes) and the three free ones are
// read; everything is read at the start, after a signal, a vDSO run or an
// instruction the decoder did not know, and every kFullEvery steps.  The
// register a data move writes (mov, movzx, movsx, lea, pop) is not read at
// all: the engine knows its value (argus_step_stop.known_reg).  With
// ARGUS_STEP_CHECK_KNOWN=1 in the environment it is read all the same and
// a difference is reported on stderr (a test of the engine's rule).
const unsigned kFullEvery = 256;

// The registers lldb does not show, and what the next read starts from.
int regs_done(Backend *b, struct argus_step_regs *out, uint64_t orig)
{
	out->r[ARGUS_REG_ORIG_RAX] = orig;
	out->r[ARGUS_REG_FS_BASE] = b->fs_base;
	out->r[ARGUS_REG_GS_BASE] = 0;
	b->last = *out;
	b->have_last = true;
	b->next_full = false;
	b->after_syscall = false;
	return 0;
}

int get_regs(void *ctx, struct argus_step_regs *out)
{
	Backend *b = static_cast<Backend *>(ctx);
	if (b->remote_regs) {
		// every general register came with the stop reply
		*out = b->rs.regs;
		return regs_done(b, out, (uint64_t)-1);   // never a syscall step
	}
	lldb::SBFrame f = b->thread.GetFrameAtIndex(0);
	if (!f.IsValid())
		return -ESRCH;
	// after a syscall all of them: the kernel writes rax, rcx and r11
	// (and more when it restarts the call or delivers a signal), which
	// the decode of `syscall` does not list
	bool full = !b->have_last || b->next_full || b->next_writes == 0 || b->after_syscall ||
		    ++b->since_full >= kFullEvery;
	lldb::SBValue gpr;
	if (full || b->map.empty()) {
		// the whole register set: costly to build, read only here
		gpr = f.GetRegisters().GetValueAtIndex(0);   // "General Purpose Registers"
		if (!gpr.IsValid())
			return -EIO;
	}
	if (b->map.empty()) {
		for (int &c : b->child_of)
			c = -1;
		uint32_t n = gpr.GetNumChildren();
		for (uint32_t i = 0; i < n; i++) {
			const char *name = gpr.GetChildAtIndex(i).GetName();
			if (!name)
				continue;
			int r = !strcmp(name, "rflags") ? ARGUS_REG_EFLAGS : argus_step_reg__by_name(name);
			if (r >= 0 && b->child_of[r] < 0) {
				b->map.emplace_back(i, r);
				b->child_of[r] = (int)i;
			}
		}
		if (b->map.size() < 17 || b->child_of[ARGUS_REG_RIP] < 0)   // rax..r15 and rip at least
			return -EIO;
	}
	if (full) {
		memset(out, 0, sizeof(*out));
		for (auto &e : b->map)
			if (read_reg(gpr, e.first, &out->r[e.second]))
				return -EIO;
		b->since_full = 0;
	} else {
		// rip, rsp, rbp straight from the frame (no value objects),
		// the others the instruction wrote by name
		*out = b->last;
		out->r[ARGUS_REG_RIP] = f.GetPC();
		out->r[ARGUS_REG_RSP] = f.GetSP();
		out->r[ARGUS_REG_RBP] = f.GetFP();
		uint32_t want = b->next_writes &
				~(1u << ARGUS_REG_RIP | 1u << ARGUS_REG_RSP | 1u << ARGUS_REG_RBP);
		for (int r = 0; want && r < ARGUS_STEP_NREGS; r++) {
			if (!(want & (1u << r)) || b->child_of[r] < 0)
				continue;
			if (r == b->next_known && !b->check_known) {
				// a data move's result, known to the engine:
				// one packet fewer (step_decode.c, data_move)
				out->r[r] = b->next_known_val;
				continue;
			}
			lldb::SBValue v = f.FindRegister(r == ARGUS_REG_EFLAGS ? "rflags" : argus_step_reg__name(r));
			lldb::SBError err;
			if (!v.IsValid())
				return -EIO;
			out->r[r] = v.GetValueAsUnsigned(err, 0);
			if (err.Fail())
				return -EIO;
			if (r == b->next_known) {
				b->checked_known++;
				if (out->r[r] != b->next_known_val) {
					b->wrong_known++;
					fprintf(stderr, "argus: step check: %s after the instruction at 0x%llx: "
						"known 0x%llx, lldb reads 0x%llx\n", argus_step_reg__name(r),
						(unsigned long long)b->last.r[ARGUS_REG_RIP],
						(unsigned long long)b->next_known_val,
						(unsigned long long)out->r[r]);
				}
			}
		}
	}
	// orig_rax is -1 at a single-step stop (the trap is an exception,
	// not a syscall entry) except right after a syscall and at the start
	return regs_done(b, out, b->after_syscall ? orig_rax(b->pid, b->tid) : (uint64_t)-1);
}

long read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	Backend *b = static_cast<Backend *>(ctx);
	lldb::SBError err;
	if (b->mem_fd >= 0) {
		ssize_t got = pread(b->mem_fd, buf, len, (off_t)addr);
		if (got > 0 && !memchr(buf, 0xcc, (size_t)got))
			return got;
		// an int3 byte may be one of lldb's breakpoints, which only
		// lldb knows to hide: ask lldb.  But after remote steps lldb's
		// memory cache may be stale: then only for the addresses of
		// its breakpoint locations (code, which the steps did not
		// change); lldb's internal ones (the loader's) show as int3
		if (got > 0 && b->rs.dirty) {
			auto at = std::lower_bound(b->bp_addrs.begin(), b->bp_addrs.end(), addr);
			if (at == b->bp_addrs.end() || *at >= addr + (uint64_t)got)
				return got;
		}
	}
	size_t n = b->proc.ReadMemory(addr, buf, len, err);
	if (n == 0 && len > 1) {
		// across the end of a mapping: what lies before the page end
		size_t head = 4096 - (addr & 4095);
		if (head < len)
			n = b->proc.ReadMemory(addr, buf, head, err);
	}
	return n ? (long)n : -EFAULT;
}

// The [vdso] mapping of the process, from /proc/PID/maps: whole lines
// (getline), and the name field exactly "[vdso]" (a file the process maps
// may have "[vdso]" in its path, and a long path must not be read as two
// lines: docs/collector.md, "Threat model").
void find_vdso(Backend *b)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	snprintf(path, sizeof(path), "/proc/%u/maps", b->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while ((len = getline(&line, &cap, f)) > 0) {
		unsigned long long lo, hi;
		int pos = 0;
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &pos) == 2 && pos &&
		    !strcmp(line + pos, "[vdso]")) {
			b->vdso_lo = lo;
			b->vdso_hi = hi;
			break;
		}
	}
	free(line);
	fclose(f);
}

bool in_vdso(const Backend *b, uint64_t pc)
{
	return pc >= b->vdso_lo && pc < b->vdso_hi;
}

uint64_t pc_of(lldb::SBThread th, uint32_t frame)
{
	lldb::SBFrame f = th.GetFrameAtIndex(frame);
	return f.IsValid() ? f.GetPC() : LLDB_INVALID_ADDRESS;
}

// Is SIGSTOP pending on the thread (SigPnd of /proc/PID/task/TID/status)?
bool sigstop_pending(uint32_t pid, uint32_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/%u/task/%u/status", pid, tid);
	FILE *f = fopen(path, "r");
	unsigned long long mask = 0;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigPnd: %llx", &mask) == 1)
			break;
	fclose(f);
	return mask & (1ull << (SIGSTOP - 1));
}

bool gone(lldb::SBProcess p)
{
	lldb::StateType s = p.GetState();
	return s == lldb::eStateExited || s == lldb::eStateDetached || s == lldb::eStateInvalid ||
	       s == lldb::eStateCrashed || s == lldb::eStateUnloaded;
}

// The vDSO's clock_gettime reads the kernel's time under a seqlock and
// retries while the kernel updated it meanwhile.  The kernel does so every
// tick (4 ms at HZ=250); stepped through lldb at about 1,000 instructions
// a second, its 30-instruction read never fits between two ticks and the
// thread would retry forever.  So the vDSO is never stepped: a step that
// enters it (a call, or the PLT's jump to an IFUNC-resolved vDSO symbol)
// or starts in it runs the thread on to the return address, with the
// other threads still stopped (RunToAddress), and says so (stop->over).
int run_out_of_vdso(Backend *b, uint64_t ret, struct argus_step_stop *stop)
{
	if (ret == LLDB_INVALID_ADDRESS || ret == 0)
		return -EIO;
	lldb::SBError err;
	b->thread.RunToAddress(ret, err);
	if (gone(b->proc) || !b->thread.IsValid())
		return -ESRCH;
	if (err.Fail() || pc_of(b->thread, 0) != ret)
		return -EIO;
	stop->over = true;
	return 0;
}

int step_once(Backend *b, struct argus_step_stop *stop);
int step_remote(Backend *b, struct argus_step_stop *stop);

// Can this step go to lldb-server directly (remote_step.cpp says which
// stay with lldb)?
bool remote_fits(Backend *b, const struct argus_step_stop *stop)
{
	if (!b->rs.ok || !b->have_last || b->mem_fd < 0)
		return false;
	if (b->remote_sig)
		return true;   // a signal to hand on: remote, whatever comes
	uint64_t pc = b->last.r[ARGUS_REG_RIP];
	uint8_t op = 0;
	return !stop->syscall && !(b->vdso_hi && in_vdso(b, pc)) &&
	       pread(b->mem_fd, &op, 1, (off_t)pc) == 1 && op != 0xcc;
}

int step(void *ctx, struct argus_step_stop *stop)
{
	Backend *b = static_cast<Backend *>(ctx);
	stop->sig = 0;
	stop->over = false;
	b->remote_regs = false;
	if (remote_fits(b, stop)) {
		int rc = step_remote(b, stop);
		if (rc != -EAGAIN)
			return rc;
	}
	if (b->rs.dirty) {
		// lldb steps next: it must see the thread as it is (its
		// step's stop clears its memory cache)
		if (remote_step_flush(&b->rs, false))
			b->rs.ok = false;
		b->remote_sig = 0;
	}
	// what get_regs reads next: anything else (a signal, a vDSO run, an
	// error) sets next_full
	b->next_writes = stop->writes;
	b->next_known = stop->known_reg;
	b->next_known_val = stop->known_val;
	b->after_syscall = stop->syscall;
	b->next_full = true;
	int rc = step_once(b, stop);
	if (!rc && !stop->sig && !stop->over)
		b->next_full = false;
	return rc;
}

int step_once(Backend *b, struct argus_step_stop *stop)
{
	if (b->vdso_hi && in_vdso(b, b->have_last ? b->last.r[ARGUS_REG_RIP] : pc_of(b->thread, 0)))
		// started inside: run to its caller's pc
		return run_out_of_vdso(b, pc_of(b->thread, 1), stop);
	if (stop->syscall) {
		std::lock_guard<std::mutex> l(b->m);
		if (!b->dog.joinable())
			b->dog = std::thread(&Backend::watchdog, b);
		b->deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(b->syscall_ms);
		b->armed = true;
		b->fired = false;
	}
	for (int tries = 0;; tries++) {
		lldb::SBError err;
		b->thread.StepInstruction(false, err);
		bool fired = false;
		if (stop->syscall) {
			std::lock_guard<std::mutex> l(b->m);
			fired = b->fired;
			b->armed = false;
		}
		if (gone(b->proc) || !b->thread.IsValid())
			return -ESRCH;
		if (fired) {
			if (b->thread.GetStopReason() == lldb::eStopReasonSignal &&
			    b->thread.GetStopReasonDataAtIndex(0) == SIGSTOP)
				return -ETIMEDOUT;   // stopped inside the call
			// the call returned just before our SIGSTOP came: it is
			// pending; one more step takes it before any instruction
			// runs (a signal-delivery stop), so it cannot stop the
			// process after detach
			if (sigstop_pending(b->pid, b->tid)) {
				lldb::SBError e2;
				b->thread.StepInstruction(false, e2);
			}
			return err.Fail() ? -EIO : 0;
		}
		if (err.Fail())
			return -EIO;
		if (b->thread.GetStopReason() != lldb::eStopReasonSignal) {
			if (b->vdso_hi && in_vdso(b, pc_of(b->thread, 0))) {
				// just entered it: the return address is on top of the stack
				uint64_t sp = b->thread.GetFrameAtIndex(0).GetSP(), ret = 0;
				if (read_mem(b, sp, &ret, sizeof(ret)) != sizeof(ret))
					return -EIO;
				return run_out_of_vdso(b, ret, stop);
			}
			return 0;
		}
		// lldb stopped for a signal before the instruction ran: step
		// again, which hands the signal to the thread
		stop->sig = (int)b->thread.GetStopReasonDataAtIndex(0);
		if (tries + 1 >= kSignalRetries)
			return 0;
		if (stop->syscall) {
			std::lock_guard<std::mutex> l(b->m);
			b->armed = true;
		}
	}
}

// One instruction through lldb-server (remote_step.cpp).  -EAGAIN: let
// lldb step it (its breakpoint at the pc, or the remote step failed).
int step_remote(Backend *b, struct argus_step_stop *stop)
{
	for (int tries = 0;; tries++) {
		int sig = b->remote_sig, got = 0;
		b->remote_sig = 0;
		switch (remote_step(&b->rs, sig, &got)) {
		case kRemoteStepped:
			if (b->vdso_hi && in_vdso(b, b->rs.pc)) {
				// just entered the vDSO: run out of it with lldb
				uint64_t ret = 0;
				if (pread(b->mem_fd, &ret, sizeof(ret), (off_t)b->rs.regs.r[ARGUS_REG_RSP]) !=
				    sizeof(ret))
					return -EIO;
				if (remote_step_flush(&b->rs, false))
					b->rs.ok = false;
				b->next_full = true;
				return run_out_of_vdso(b, ret, stop);
			}
			b->remote_regs = true;
			return 0;
		case kRemoteSignal:
			// not run yet: the next step hands the signal on
			stop->sig = got;
			b->remote_sig = got;
			b->remote_regs = true;
			if (tries + 1 >= kSignalRetries)
				return 0;
			continue;
		case kRemoteBreakpoint:
			return -EAGAIN;
		case kRemoteError:
			if (gone(b->proc))
				return -ESRCH;
			b->rs.ok = false;   // lldb from here on
			return -EAGAIN;
		}
	}
}

void close_backend(void *ctx)
{
	Backend *b = static_cast<Backend *>(ctx);
	// leave lldb a true picture of the thread
	if (b->rs.dirty && !gone(b->proc))
		remote_step_flush(&b->rs, true);
	delete b;
}

// fs_base of the thread: pthread_self() (glibc: the TCB, which fs_base
// points to), run in the target once per thread.  The TCB starts with two
// pointers to itself (tcbhead_t.tcb, .self at +16): checked, so a value
// that is not the thread pointer is not used.  0 when not had.
uint64_t thread_pointer(lldb::SBProcess proc, lldb::SBThread th, uint32_t pid, uint32_t tid)
{
	auto key = std::make_pair(pid, tid);
	auto it = g_fs_base.find(key);
	if (it != g_fs_base.end())
		return it->second;
	lldb::SBValue v = eval_pthread_self(th);
	uint64_t tp = 0;
	if (v.IsValid() && v.GetError().Success()) {
		uint64_t cand = v.GetValueAsUnsigned(0), self[3] = {0, 0, 0};
		lldb::SBError err;
		if (cand && proc.ReadMemory(cand, self, sizeof(self), err) == sizeof(self) && self[0] == cand &&
		    self[2] == cand)
			tp = cand;
	}
	g_fs_base[key] = tp;
	return tp;
}

}  // namespace

struct argus_stepper *open_stepper(lldb::SBProcess proc, uint32_t tid, uint32_t syscall_ms,
				   std::string &err)
{
	uint32_t pid = (uint32_t)proc.GetProcessID();
	lldb::SBThread th = proc.GetThreadByID(tid);
	if (!th.IsValid()) {
		err = "no thread " + std::to_string(tid) + " in process " + std::to_string(pid) +
		      " (thread list shows its threads)";
		return nullptr;
	}
	if (proc.GetState() != lldb::eStateStopped) {
		err = std::string("process ") + std::to_string(pid) + " is " +
		      lldb::SBDebugger::StateAsCString(proc.GetState()) +
		      ", not stopped: stop it first (process interrupt)";
		return nullptr;
	}
	Backend *b = new Backend;
	b->proc = proc;
	b->thread = th;
	b->pid = pid;
	b->tid = tid;
	b->syscall_ms = syscall_ms ? syscall_ms : 5000;
	b->fs_base = thread_pointer(proc, th, pid, tid);
	find_vdso(b);
	// remote steps need the expression remote_step_flush runs, which is
	// the one thread_pointer just ran: no thread pointer, no remote steps
	remote_step_open(&b->rs, proc, tid);
	if (!b->fs_base)
		b->rs.ok = false;
	lldb::SBTarget target = proc.GetTarget();
	for (uint32_t i = 0; i < target.GetNumBreakpoints(); i++) {
		lldb::SBBreakpoint bp = target.GetBreakpointAtIndex(i);
		for (size_t j = 0; j < bp.GetNumLocations(); j++) {
			lldb::SBBreakpointLocation loc = bp.GetLocationAtIndex((uint32_t)j);
			if (loc.IsValid() && loc.GetLoadAddress() != LLDB_INVALID_ADDRESS)
				b->bp_addrs.push_back(loc.GetLoadAddress());
		}
	}
	std::sort(b->bp_addrs.begin(), b->bp_addrs.end());
	{
		char path[64];
		snprintf(path, sizeof(path), "/proc/%u/mem", pid);
		b->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		const char *ck = getenv("ARGUS_STEP_CHECK_KNOWN");
		b->check_known = ck && !strcmp(ck, "1");
	}

	struct argus_step_backend be;
	memset(&be, 0, sizeof(be));
	be.sz = sizeof(be);
	be.ctx = b;
	be.get_regs = get_regs;
	be.read_mem = read_mem;
	be.step = step;
	be.close = close_backend;
	struct argus_step_opts o;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.syscall_timeout_ms = b->syscall_ms;
	o.tid = tid;
	struct argus_stepper *s = argus_step__open_backend(&be, pid, &o);
	if (!s) {
		// the engine called close (b is freed) if it got that far
		int e = errno;
		err = std::string("cannot read the registers of thread ") + std::to_string(tid) +
		      " through lldb: " + strerror(e);
		return nullptr;
	}
	return s;
}

}  // namespace argus_lldb
