/* report_page.c - see report_page.h.
 *
 * The hang, the diagnosis and the stacks are diag_run()'s, the very
 * computation of `argus diagnose` (same flags, same choice of hang, same
 * defaults where the slice must choose: no questions asked), printed once
 * as JSON and once as text into memory; the page embeds both and draws
 * what run->d holds.
 *
 * -o: checked before any work (argus_out__check: an existing file argus
 * did not make is refused unless --force), then the page, built in
 * memory, is written to a file created 0600 with O_EXCL|O_NOFOLLOW
 * (argus_out__open, as `argus save -o`): it names processes and their
 * stacks, as private as the trace. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diag_front.h"
#include "diag_run.h"
#include "graph_open.h"
#include "msg.h"
#include "report_html.h"
#include "report_page.h"
#include "safe_file.h"
#include "trace_format.h"
#include "units.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The diagnosis printed into a malloc'd string (JSON or text). */
static int print_to(struct graph_open_ctx *c, const struct diag_run *run, bool json, char **out)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);

	if (!f)
		return -ENOMEM;
	diag_run_print(f, c, run, json);
	if (fclose(f))
		return -ENOMEM;
	return 0;
}

/* The page into memory, then into `out` (created 0600). */
static int write_page(const char *out, unsigned out_flags, const struct report_html_in *in,
		      size_t *size)
{
	struct argus_error err = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc, fd;

	if (!f)
		return msg_error("report", "out of memory");
	rc = report_html_write(f, in);
	if (fclose(f) && !rc)
		rc = -ENOMEM;
	if (rc) {
		free(buf);
		return msg_error("report", "cannot draw the report: %s", strerror(-rc));
	}
	fd = argus_out__open(out, out_flags, &err);
	if (fd < 0) {
		free(buf);
		return msg_out_error("report", &err);
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = w < 0 ? errno : EIO;
			close(fd);
			unlink(out);
			free(buf);
			return msg_error("report", "writing %s: %s (nothing written)", out, strerror(rc));
		}
		off += (size_t)w;
	}
	if (fsync(fd) || close(fd)) {
		rc = errno;
		unlink(out);
		free(buf);
		return msg_error("report", "writing %s: %s (nothing written)", out, strerror(rc));
	}
	*size = len;
	free(buf);
	return 0;
}

int report_page_check(const struct diag_front_opts *o, const struct report_page_args *ra)
{
	struct argus_error err = { 0 };
	struct stat si, so;

	if (!ra->out)
		return msg_usage_error("report", "needs -o FILE (the HTML page to write)");
	if (!stat(ra->out, &so) && !stat(o->g.path, &si) && so.st_dev == si.st_dev &&
	    so.st_ino == si.st_ino)
		return msg_usage_error("report", "-o %s would overwrite the trace", ra->out);
	/* before the graph is built: a refused -o costs nothing */
	if (argus_out__check(ra->out, ra->out_flags, &err))
		return msg_out_error("report", &err);
	return 0;
}

int report_page_write(struct graph_open_ctx *c, struct diag_front_opts *o,
		      const struct argus_hang *pre, uint32_t npre,
		      const struct report_page_args *ra, char **summary)
{
	struct diag_run run;
	struct report_html_in in = { 0 };
	char *json = NULL, *text = NULL, sz[32];
	uint64_t t0, t1 = 0;
	size_t size = 0;
	int rc;

	*summary = NULL;
	o->cmd = "report";
	t0 = now_ns();
	/* the JSON as `argus diagnose --json` prints it: the page embeds it */
	o->json = true;
	o->dot = false;
	{
		size_t jlen = 0;
		FILE *jf = open_memstream(&json, &jlen);

		if (!jf)
			return msg_error("report", "out of memory");
		rc = diag_run(c, o, pre, npre, 0, jf, &run);
		if (fclose(jf) && !rc)
			rc = msg_error("report", "out of memory");
	}
	t1 = now_ns();
	if (!rc && print_to(c, &run, false, &text))
		rc = msg_error("report", "out of memory");
	if (!rc) {
		in = (struct report_html_in){ .c = c, .run = &run, .json = json, .text = text,
					      .trace_path = o->g.path };
		rc = write_page(ra->out, ra->out_flags, &in, &size);
	}
	if (!rc) {
		const struct argus_diagnosis *d = run.d;
		char who[96] = "none";

		if (d->nchain)
			snprintf(who, sizeof(who), "%s %u", diag_front_comm(c, d->chain[0].tid),
				 d->chain[0].tid);
		argus_format_size(size, sz, sizeof(sz));
		if (asprintf(summary, "argus report: %s: hang of %s %u/%u (%s, %.0f ms), culprit %s -> %s"
			     " (%s; the graph took %.0f ms, the diagnosis %.0f ms, the page %.0f ms)\n",
			     o->g.path, diag_front_comm(c, d->hang.tid), d->hang.pid, d->hang.tid,
			     argus_hang_kind_str(d->kind), (double)(d->hang.end - d->hang.start) / 1e6,
			     who, ra->out, sz, (double)argus_graph__stats(c->g)->build_ns / 1e6,
			     (double)(t1 - t0) / 1e6, (double)(now_ns() - t1) / 1e6) < 0) {
			*summary = NULL;
			rc = msg_error("report", "out of memory");
		}
	}
	free(json);
	free(text);
	diag_run_free(&run);
	return rc;
}
