/* report_html.h - `argus report`'s page: one self-contained HTML file that
 * draws a diagnosis (diag_run.h) as a timeline (issue 15 §1).
 *
 * What the page holds, and the attributes a test (or a script) reads:
 *   - two panels side by side in time: the similar normal run (when the
 *     diagnosis found one) and the hang window.  Each has one row per
 *     thread of the diagnosis: <g class="row" data-tid data-pid
 *     data-role="hang path culprit chain flag-writer" (the roles it has)>;
 *   - in a row, runs and waits as <rect class="run|wait" data-t0 data-t1
 *     data-seg> (CLOCK_MONOTONIC ns); a wait also has data-syscall and
 *     data-obj; each has a <title> (the tooltip).  Runs and waits shorter
 *     than a pixel are merged into the run around them (data-nseg);
 *   - edges as <line class="edge" data-edge-id data-edge-type
 *     data-edge-src-tid data-edge-dst-tid data-t0 data-t1>: in the normal
 *     panel the diagnosis's path (data-path-step = the index in the JSON
 *     "path" of the edge's destination end's successor: path[i].edge leads
 *     from path[i] to path[i-1]), in the hang panel the strong edges among
 *     the rows' threads inside the window (data-panel="hang");
 *   - the verdict, each culprit's stack (<details class="stack" data-tid>),
 *     the text report, the `argus diagnose --json` object in
 *     <script type="application/json" id="argus-diagnosis">, and the
 *     Perfetto JSON (argus export) of the rows' processes over both panels
 *     in <script type="application/json" id="argus-perfetto">.
 * No network: CSS and the small script are inline.
 *
 * Cost: the rows' segments inside the two windows, and one pass over the
 * graph's segments and edges for the Perfetto part (argus_graph__write_
 * perfetto with pids and a window); nothing else of the graph is read. */
#ifndef ARGUS_REPORT_HTML_H
#define ARGUS_REPORT_HTML_H
#include <stddef.h>
#include <stdio.h>

#include "diag_run.h"

struct report_html_in {
	struct graph_open_ctx *c;
	const struct diag_run *run;  /* run->d: the diagnosis drawn */
	const char *json;            /* diag_run_print(..., json = true) */
	const char *text;            /* diag_run_print(..., json = false) */
	const char *trace_path;      /* named in the page's title */
};

/* Writes the page to f.  0, or -errno (-ENOMEM; -EIO when f failed). */
int report_html_write(FILE *f, const struct report_html_in *in);
#endif
