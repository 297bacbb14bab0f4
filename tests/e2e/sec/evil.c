/* evil.c -> libevil.so (sec_uprobe_steer.sh): one function, "handler",
 * SKIP bytes of nops into its own section, so that the test can place it
 * at a chosen file offset (the offset of memfrob's `xorb $0x2a` immediate
 * in libc: a probe there, on libc, would corrupt every memfrob). */
#ifndef SKIP
#define SKIP 0
#endif
#define S(x) #x
#define XS(x) S(x)
__asm__(".section .text.evil,\"ax\",@progbits\n"
	".skip " XS(SKIP) ", 0x90\n"
	".globl handler\n.type handler,@function\nhandler:\n"
	"  nop\n  nop\n  nop\n  nop\n  nop\n  nop\n  nop\n  nop\n  ret\n"
	".size handler,9\n"
	".text\n");
