/* report_page.h - `argus report`: the diagnosis of a hang as one
 * self-contained HTML page (report_html.h draws it), for the session
 * (argus_session__report). */
#ifndef ARGUS_REPORT_PAGE_H
#define ARGUS_REPORT_PAGE_H
#include <stdint.h>

#include "argus_diag.h"
#include "diag_front.h"
#include "graph_open.h"

/* report's own words, from diag_front_parse("report") */
struct report_page_args {
	const char *out;         /* -o FILE */
	unsigned out_flags;      /* --force: ARGUS_OUT_FORCE */
};

/* Before the graph: -o given, not the trace itself, and a file argus may
 * write (argus_out__check).  0, or the exit code after an error line. */
int report_page_check(const struct diag_front_opts *o, const struct report_page_args *ra);
/* Diagnoses as diag_run does (pre/npre: the thread's hangs when the
 * caller has them) and writes the page; *summary (malloc'd) is the line
 * `argus report` prints.  0, or the exit code after an error line. */
int report_page_write(struct graph_open_ctx *c, struct diag_front_opts *o,
		      const struct argus_hang *pre, uint32_t npre,
		      const struct report_page_args *ra, char **summary);
#endif
