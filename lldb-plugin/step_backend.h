// step_backend.h - the step engine's backend over lldb (step_backend.cpp).
#ifndef ARGUS_LLDB_STEP_BACKEND_H
#define ARGUS_LLDB_STEP_BACKEND_H

#include <stdint.h>

#include <string>

#include <lldb/API/LLDB.h>

struct argus_stepper;

namespace argus_lldb {

// A stepper (step/argus_step.h) for thread tid of the stopped process
// proc, driven through lldb: a plain step is one packet to lldb-server
// with every register in its reply (remote_step.h), the others lldb's
// SBThread::StepInstruction with registers from frame 0; memory from
// /proc/PID/mem, or SBProcess::ReadMemory where lldb hides a breakpoint.  A syscall
// that blocks longer than syscall_ms is interrupted (a SIGSTOP to the
// thread, which lldb does not pass on) and the step returns -ETIMEDOUT.  Closing it leaves
// the process stopped, as lldb had it.  nullptr with err on failure.
// Needs the debugger synchronous (SetAsync(false)) while it is used.
struct argus_stepper *open_stepper(lldb::SBProcess proc, uint32_t tid, uint32_t syscall_ms,
				   std::string &err);

}  // namespace argus_lldb

#endif
