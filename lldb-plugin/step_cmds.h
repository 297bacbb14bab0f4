// step_cmds.h - `argus step`, `argus flag`, `argus step-diff` and `argus
// watch` inside lldb (step_cmds.cpp).  argus_lldb.cpp registers them and
// hands their Run to lldb's result object as for the other commands.
#ifndef ARGUS_LLDB_STEP_CMDS_H
#define ARGUS_LLDB_STEP_CMDS_H

#include <string>
#include <vector>

#include <lldb/API/LLDB.h>

#include "capture.h"

namespace argus_lldb {

struct Run {
	int rc = 1;               // 0 ok, 1 error, 2 usage (as the CLI); -1 the
	                          // capture itself could not be set up
	std::string out, err;     // stdout (the report, or the JSON), stderr
};

// Calls fn(argv) in process with its stdout and stderr captured
// (capture.h): argus step and flag through lldb.
Run capture(argus_capture_fn fn, const std::vector<std::string> &argv);
// Runs the argus binary beside the plugin (set_argus_binary) with args
// (the words after "argus") as a child, its output captured: the CLI's
// own commands on files and on the collector.
Run run_argus(const std::vector<std::string> &args);
void set_argus_binary(const std::string &path);

// name: "step", "flag", "step-diff" or "watch"; args: the words after it.
Run stepping_command(lldb::SBDebugger d, const char *name, const std::vector<std::string> &args);

}  // namespace argus_lldb

#endif
