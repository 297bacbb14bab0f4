// step_cmds.h - `argus step`, `argus flag`, `argus step-diff` and `argus
// watch` inside lldb (step_cmds.cpp).  argus_lldb.cpp registers them and
// hands their Run to lldb's result object as for the other commands.
#ifndef ARGUS_LLDB_STEP_CMDS_H
#define ARGUS_LLDB_STEP_CMDS_H

#include <string>
#include <vector>

#include <lldb/API/LLDB.h>

namespace argus_lldb {

struct Run {
	int rc = 1;               // 0 ok, 1 error, 2 usage (as the CLI)
	std::string out, err;     // stdout (the report, or the JSON), stderr
};

// name: "step", "flag", "step-diff" or "watch"; args: the words after it.
Run stepping_command(lldb::SBDebugger d, const char *name, const std::vector<std::string> &args);

}  // namespace argus_lldb

#endif
