/* live_fake_hooks.c - a stand-in interposer for tests/e2e/live_instrument.sh:
 * built as fakehook/libargus-interpose.so, it exports the four argus_work_*
 * functions of interposer/argus_work.h and writes one line per call to
 * stderr ("HOOK begin item=0x..."), so the test sees that a patched
 * function called the hook, with its first argument, in a real process,
 * whether or not the real interposer of this build has the work-item API
 * yet.  It has no ring and registers with nobody. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void say(const char *kind, const void *item)
{
	char b[96];
	int n = snprintf(b, sizeof(b), "HOOK %s item=%p\n", kind, item);

	/* write(2): no stdio lock, callable from any thread at any time */
	if (n > 0 && write(2, b, (size_t)n) < 0)
		return;
}

__attribute__((visibility("default"))) void argus_work_enqueue(const void *item)
{
	say("enqueue", item);
}

__attribute__((visibility("default"))) void argus_work_begin(const void *item)
{
	say("begin", item);
}

__attribute__((visibility("default"))) void argus_work_end(const void *item)
{
	say("end", item);
}

__attribute__((visibility("default"))) void argus_work_boundary(const void *tag)
{
	say("boundary", tag);
}
