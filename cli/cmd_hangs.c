/* cmd_hangs.c - `argus hangs FILE --pid PID`: the intervals in which the
 * UI thread did not come back to its event-loop wait for longer than the
 * threshold, and the ones an `argus mark` annotated. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_diag.h"
#include "cli.h"
#include "diag_cli.h"
#include "graph_cli.h"
#include "hangs_saved.h"

int cmd_hangs(int argc, char **argv)
{
	struct diag_cli_opts d = { 0 };
	struct graph_cli_ctx c;
	struct argus_hang *h = NULL;
	uint32_t n = 0;
	int rc;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--saved"))
			return hangs_saved_cmd(argc, argv);
	if ((rc = diag_cli_parse("hangs", argc, argv, &d, false)))
		return rc;
	if ((rc = graph_cli_open(&c, "hangs", &d.g)))
		return rc;
	rc = diag_cli_hangs(&c, "hangs", &d, &h, &n);
	if (rc) {
		graph_cli_close(&c);
		return rc;
	}
	if (d.json) {
		printf("{\"hangs\":[");
		for (uint32_t i = 0; i < n; i++) {
			printf("%s", i ? "," : "");
			diag_cli_json_hang(&c, &h[i], ARGUS_KIND_NONE);
		}
		printf("]}\n");
	} else {
		diag_cli_print_thread_line(&c, d.tid ? d.tid : d.pid);
		printf(": %u hang%s of %.0f ms or more, or annotated\n", n, n == 1 ? "" : "s",
		       (double)d.threshold_ns / 1e6);
		for (uint32_t i = 0; i < n; i++)
			diag_cli_print_hang(&c, &h[i], i + 1);
	}
	free(h);
	graph_cli_close(&c);
	return 0;
}
