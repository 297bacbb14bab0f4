/* syscall_names.c - see syscall_names.h; the table is generated at build
 * time from the UAPI header (scripts/gen-syscall-names.sh). */
#include "syscall_names.h"

#include <string.h>

#include "syscall_class.h"
#include "syscall_table.h"

#define NSYS ((long)(sizeof(argus_syscall_table) / sizeof(argus_syscall_table[0])))

const char *argus_syscall_name(long nr)
{
	return nr >= 0 && nr < NSYS ? argus_syscall_table[nr] : NULL;
}

long argus_syscall_nr(const char *name)
{
	for (long i = 0; i < NSYS; i++)
		if (argus_syscall_table[i] && !strcmp(argus_syscall_table[i], name))
			return i;
	return -1;
}

unsigned argus_syscall_class_by_name(const char *name)
{
	return argus_sys_class(argus_syscall_nr(name));
}
