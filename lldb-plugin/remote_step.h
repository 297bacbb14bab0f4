// remote_step.h - single steps straight to lldb-server, past lldb's thread
// plans (remote_step.cpp has the why and the rules).
#ifndef ARGUS_LLDB_REMOTE_STEP_H
#define ARGUS_LLDB_REMOTE_STEP_H

#include <stdint.h>

#include <lldb/API/LLDB.h>

extern "C" {   // argus_step.h is a C header without C++ guards
#include "argus_step.h"
}

namespace argus_lldb {

struct RemoteStep {
	lldb::SBCommandInterpreter ci;
	uint32_t pid = 0, tid = 0;
	// remote register number -> enum argus_step_reg, -1 unused
	int reg_of[64];
	bool ok = false;          // usable: gdb-remote and the registers mapped
	bool dirty = false;       // steps lldb did not see: flush before lldb acts
	uint64_t pc = 0;          // the thread's pc after the last remote step
	// the registers of the last stop reply (orig_rax, fs_base and
	// gs_base are not in it: the caller fills them)
	struct argus_step_regs regs;
};

// Map lldb-server's register numbers (qRegisterInfo) for thread tid of
// proc.  rs->ok stays false when the process is not a gdb-remote one, the
// registers cannot be mapped, or ARGUS_STEP_REMOTE=0 is in the environment.
void remote_step_open(RemoteStep *rs, lldb::SBProcess proc, uint32_t tid);

// Outcome of one remote step.
enum RemoteStepResult {
	kRemoteStepped,      // the instruction ran: rs->regs, rs->pc are new
	kRemoteSignal,       // a signal stopped the thread first: *sig says which
	kRemoteBreakpoint,   // lldb's breakpoint is at the pc: step it with lldb
	kRemoteError,        // anything else (rs->dirty says whether to flush)
};

// One instruction of the thread, the other threads stopped, handing sig
// (0 none) to the thread as it resumes.
RemoteStepResult remote_step(RemoteStep *rs, int sig, int *stop_sig);

// Make lldb forget what it cached of the thread (registers, frames) after
// remote steps, so its next look reads the thread afresh; with memory, its
// memory cache too (a call in the thread: some ms).  Enough without
// memory when lldb's next act resumes the thread.  0 or -EIO.
int remote_step_flush(RemoteStep *rs, bool memory);

// pthread_self() called in thread th (an expression: the thread runs a few
// instructions, the others stay stopped, registers restored after).
lldb::SBValue eval_pthread_self(lldb::SBThread th);

}  // namespace argus_lldb

#endif
