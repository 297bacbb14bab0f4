/* main.c - the `argus` binary: everything is in the argus_cli library
 * (argus.c dispatches to cmd_*.c), so the lldb plugin can run the same
 * commands in process. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "symbolize.h"

int main(int argc, char **argv)
{
	const char *inproc = getenv("ARGUS_SYMBOLIZE_INPROCESS");

	/* Only this binary turns it on: the symbolizer's sandboxed helper is
	 * a fresh exec of /proc/self/exe (symbols/symbolize.h), which inside
	 * lldb (the plugin runs the same commands) would be lldb.  Stacks name
	 * other users' files, parsed as root otherwise (docs/collector.md,
	 * "Threat model").  ARGUS_SYMBOLIZE_INPROCESS=1: parse here, to
	 * measure the difference. */
	argus_symbolizer__set_sandbox(!(inproc && !strcmp(inproc, "1")));
	return argus_cli_main(argc, argv);
}
