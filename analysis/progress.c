/* progress.c - see progress.h. */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "msg.h"
#include "collector.h"
#include "progress.h"

static bool on_terminal_anyway;

void progress_set_terminal(bool on)
{
	on_terminal_anyway = on;
}

void progress_begin(struct progress *p, const char *what, const char *unit)
{
	*p = (struct progress){ .what = what, .unit = unit };
	/* only where the messages go to the terminal: not into a host's
	 * buffer (msg_set_err: the lldb plugin), not into a pipe; a session
	 * of the CLI collects its messages but draws on the terminal */
	p->tty = (msg_err() == stderr || on_terminal_anyway) && isatty(2);
	p->t0 = argus_now_ns();
}

int progress_cb(void *vp, uint64_t done, uint64_t total)
{
	struct progress *p = vp;
	unsigned pct = total ? (unsigned)(done * 100 / total) : 0;
	uint64_t now;

	if (!p)
		return 0;
	if (p->tty) {
		now = argus_now_ns();
		if (now - p->t0 >= CLI_PROGRESS_DELAY_NS && now - p->last >= 100000000ull) {
			if (pct > 100)
				pct = 100;
			fprintf(stderr, "\r%s: %3u%% [%-40.*s] %" PRIu64 " %s", p->what, pct,
				(int)(pct * 40 / 100), "########################################",
				done, p->unit ? p->unit : "");
			fflush(stderr);
			p->shown = true;
			p->last = now;
		}
	}
	return p->cancel ? *p->cancel : 0;
}

void progress_end(struct progress *p)
{
	if (p && p->shown) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
		p->shown = false;
	}
}
