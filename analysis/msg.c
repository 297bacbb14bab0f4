/* msg.c - see msg.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "argus_graph.h"
#include "msg.h"
#include "trace_format.h"

static FILE *err_stream;
static const char *synopsis_cmd, *synopsis;  /* the last parsed command's */

FILE *msg_err(void)
{
	return err_stream ? err_stream : stderr;
}

void msg_set_err(FILE *f)
{
	err_stream = f;
}

void msg_set_synopsis(const char *cmd, const char *text)
{
	synopsis_cmd = cmd;
	synopsis = text;
}

static void vreport(const char *cmd, const char *fmt, va_list ap)
{
	FILE *f = msg_err();

	/* "argusd" is the daemon itself (collector/argusd_opts.c) */
	fprintf(f, strcmp(cmd, "argusd") ? "argus %s: " : "%s: ", cmd);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
}

int msg_usage_error(const char *cmd, const char *fmt, ...)
{
	const char *usage = synopsis_cmd && !strcmp(synopsis_cmd, cmd) ? synopsis : NULL;
	va_list ap;

	va_start(ap, fmt);
	vreport(cmd, fmt, ap);
	va_end(ap);
	if (usage)
		fprintf(msg_err(), "usage: %s", usage);
	return 2;
}

int msg_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cmd, fmt, ap);
	va_end(ap);
	return 1;
}

const char *msg_tstr(const char *s)
{
	static char buf[16][16384];
	static unsigned next;
	char *b = buf[next++ % 16];

	if (argus_text_escape(s, b, sizeof(buf[0])) >= sizeof(buf[0]))
		strcpy(b + strlen(b) - (strlen(b) > 3 ? 3 : strlen(b)), "...");
	return b;
}

int msg_out_error(const char *cmd, const struct argus_error *err)
{
	if (err->code == -EEXIST)
		return msg_error(cmd, "%s, or pass --force to replace it (a link is replaced,"
				 " never followed)", err->msg);
	return msg_error(cmd, "%s", err->msg);
}
