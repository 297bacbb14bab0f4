/* case_busy.c - case study 2 (BRIEF §7, the paper's TextEdit paste): the UI
 * main thread itself is busy in a named call chain.
 *
 * Processes (fork, no exec):
 *   "textedit"      the UI; its main thread runs the event loop in poll() on
 *                   the input pipe.
 *   "input_feeder"  writes one input byte every 150 ms: 'k' = a keystroke,
 *                   'P' = a paste (input 7 of 9; input 8 comes 2.8 s
 *                   later, when the UI is back in poll()).
 *
 * A keystroke inserts one character and reflows its line:
 *   insert_char -> reflow_line -> measure_glyphs        (a few microseconds)
 * The paste (input 7 of 9) reformats the whole pasted text:
 *   paste_reformat_text -> reflow_line -> measure_glyphs
 * line after line, for PASTE_MS (2500 ms) of CPU, without a single syscall
 * in between but clock_gettime (vDSO).  Most samples land in measure_glyphs.
 * All four functions are noinline and none is a tail call.
 *
 * usage: case_busy [IDLE_MS]   (about 4.0 s; IDLE_MS: the UI waits idle in
 *                               poll() that long before the first input)
 *
 * Ground truth on stdout, KEY=VALUE:
 *   UI_PID UI_TID UI_COMM                 the textedit main thread
 *   INPUT_FEEDER_PID INPUT_FEEDER_TID INPUT_FEEDER_COMM
 *   HANG_START_NS HANG_END_NS HANG_MS     CLOCK_MONOTONIC, around the paste
 *   NORMAL_ITERATIONS NORMAL_BEFORE_HANG NORMAL_MAX_NS
 *   EXPECT_KIND=busy
 *   CULPRIT_PID CULPRIT_TID CULPRIT_COMM CULPRIT_KIND=busy  (the UI thread)
 *   CHAIN=ui_tid
 *   HOT_FUNCTION=measure_glyphs HOT_CALLER=paste_reformat_text
 *   HOT_FUNCTION_ADDR HOT_CALLER_ADDR REFLOW_LINE_ADDR  (hex, as mapped)
 *   PASTE_LINES                           lines reflowed by the paste
 */
#include "case_common.h"

#define KEYS "kkkkkkPkk"
#define PASTE_MS 2500
#define LINE_LEN 80

static char doc[LINE_LEN + 1] = "The quick brown fox jumps over the lazy dog. ";
static volatile unsigned long width_sink;

/* The hot function: "shapes" a line, passes times over (pure CPU). */
CASE_FN unsigned long measure_glyphs(const char *text, int len, int passes)
{
	unsigned long w = 0;

	for (int p = 0; p < passes; p++)
		for (int i = 0; i < len; i++)
			w = w * 31 + (unsigned char)text[i] + (w >> 7);
	return w;
}

CASE_FN unsigned long reflow_line(const char *text, int passes)
{
	unsigned long w = measure_glyphs(text, (int)strlen(text), passes);

	width_sink = w; /* keeps the call from being a tail call */
	return w + 1;
}

/* The hang: reflow pasted lines until PASTE_MS of CPU have gone by. */
CASE_FN int paste_reformat_text(void)
{
	unsigned long long end = now_ns() + PASTE_MS * 1000000ull;
	int lines = 0;

	do {
		width_sink = reflow_line(doc, 2000);
		lines++;
	} while (now_ns() < end);
	return lines;
}

CASE_FN void insert_char(int pos)
{
	doc[pos % (LINE_LEN - 1)] = (char)('a' + pos % 26);
	width_sink = reflow_line(doc, 1);
}

int main(int argc, char **argv)
{
	struct feeder f = FEEDER(KEYS, 'P', 2800);
	struct ui_stats st = {0};
	int lines = 0, rc = 0;
	pid_t feeder;
	char c;

	if (argc > 2 || (argc == 2 && (f.idle_ms = atoi(argv[1])) <= 0)) {
		fprintf(stderr, "usage: case_busy [IDLE_MS]\n");
		return 2;
	}
	become("textedit");
	feeder = spawn_feeder(&f);
	close(f.wfd);
	gt_self("UI");

	for (int seq = 0;; seq++) {
		if (!(c = wait_input(f.rfd)))
			break;
		unsigned long long t0 = now_ns();
		if (c == 'P')
			lines = paste_reformat_text();
		else
			insert_char(seq);
		stats_add(&st, c == 'P', t0, now_ns());
	}

	rc |= reap(feeder, "input_feeder");
	gt("EXPECT_KIND=busy");
	gt("CULPRIT_PID=%d", getpid());
	gt("CULPRIT_TID=%d", my_tid());
	gt("CULPRIT_COMM=textedit");
	gt("CULPRIT_KIND=busy");
	gt("CHAIN=%d", my_tid());
	gt("HOT_FUNCTION=measure_glyphs");
	gt("HOT_CALLER=paste_reformat_text");
	gt("HOT_FUNCTION_ADDR=%p", (void *)measure_glyphs);
	gt("HOT_CALLER_ADDR=%p", (void *)paste_reformat_text);
	gt("REFLOW_LINE_ADDR=%p", (void *)reflow_line);
	gt("PASTE_LINES=%d", lines);
	rc |= stats_report(&st, CASE_HANG_MIN_NS);
	return rc;
}
