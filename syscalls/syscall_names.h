/* syscall_names.h - x86_64 syscall number <-> name. */
#ifndef ARGUS_SYSCALL_NAMES_H
#define ARGUS_SYSCALL_NAMES_H
/* NULL when nr is unknown. */
const char *argus_syscall_name(long nr);
/* -1 when name is unknown. */
long argus_syscall_nr(const char *name);
#endif
