/* syscall_names.h - x86_64 syscall number <-> name. */
#ifndef ARGUS_SYSCALL_NAMES_H
#define ARGUS_SYSCALL_NAMES_H
/* NULL when nr is unknown. */
const char *argus_syscall_name(long nr);
/* -1 when name is unknown. */
long argus_syscall_nr(const char *name);
/* The classes (syscall_class.h: ARGUS_SC_*) of the syscall called name;
 * 0 when unknown.  For code that has a name, not a number (a debugger's
 * frame), or cannot include the table's lookup (C++). */
unsigned argus_syscall_class_by_name(const char *name);
#endif
