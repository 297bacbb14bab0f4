/* main.c - the `argus` binary: everything is in the argus_cli library
 * (argus.c dispatches to cmd_*.c), so the lldb plugin can run the same
 * commands in process. */
#include "cli.h"

int main(int argc, char **argv)
{
	return argus_cli_main(argc, argv);
}
