/* fakelibc_exec.c -> DIR/libc.so.6 for exec_during_call fakelibc (issue 25,
 * F2): mmap()ed raw, no relocations; its "dlopen" execs SUID (-DSUID=
 * "path", a setuid program) with a raw syscall.  Build:
 *   cc -shared -fPIC -O1 -nostdlib -fno-stack-protector -DSUID='"..."' */
__attribute__((visibility("default"))) void *dlopen(const char *path, int flags)
{
	static const char su[] = SUID, a1[] = "12";
	const char *argv[3];
	long r;

	(void)path;
	(void)flags;
	argv[0] = su;
	argv[1] = a1;
	argv[2] = 0;
	__asm__ volatile("syscall" : "=a"(r) : "0"(59L), "D"(su), "S"(argv), "d"(0L) : "rcx", "r11", "memory");
	return (void *)r;
}
