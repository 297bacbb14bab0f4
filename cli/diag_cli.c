/* diag_cli.c - see diag_cli.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diag_cli.h"
#include "symbolize.h"

static int parse_u32(const char *cmd, const char *opt, const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || v == 0 || v > UINT32_MAX)
		return cli_usage_error(cmd, "%s: '%s' is not a positive number", opt, s);
	*out = (uint32_t)v;
	return 0;
}

/* --at: integer = CLOCK_MONOTONIC ns; "12.5" or "12.5s" = seconds from the
 * trace start. */
static int parse_at(const char *cmd, const char *s, struct diag_cli_opts *o)
{
	char *end;

	if (strchr(s, '.') || strchr(s, 's')) {
		double v = strtod(s, &end);

		if (end == s || (*end && strcmp(end, "s")) || v < 0)
			return cli_usage_error(cmd, "--at: '%s' is not a time (ns, or seconds like 12.5s)", s);
		o->at_ns = (uint64_t)(v * 1e9);
		o->at_rel = true;
	} else {
		errno = 0;
		o->at_ns = strtoull(s, &end, 10);
		if (!*s || *end || errno)
			return cli_usage_error(cmd, "--at: '%s' is not a time (ns, or seconds like 12.5s)", s);
	}
	o->have_at = true;
	return 0;
}

static int parse_picks(const char *cmd, const char *s, struct diag_cli_opts *o)
{
	const char *p = s;

	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 1 || v > 64 || (*end && *end != ','))
			return cli_usage_error(cmd, "--pick: '%s' is not a list of choices like 1,2,1", s);
		if (o->npicks == DIAG_MAX_PICKS)
			return cli_usage_error(cmd, "--pick: at most %d choices", DIAG_MAX_PICKS);
		o->picks[o->npicks++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

int diag_cli_parse(const char *cmd, int argc, char **argv, struct diag_cli_opts *o,
		   bool diagnose)
{
	memset(o, 0, sizeof(*o));
	o->threshold_ns = 2000000000ull;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		int used = graph_cli_common_flag(&o->g, argc, argv, i);

		if (used < 0)
			return 2;
		if (used) {
			i += used - 1;
			continue;
		}
		if (!strcmp(a, "--json")) {
			o->json = true;
			continue;
		}
		if (diagnose && !strcmp(a, "--dot")) {
			o->dot = true;
			continue;
		}
		if (a[0] != '-') {
			if (o->g.path)
				return cli_usage_error(cmd, "unexpected argument '%s'", a);
			o->g.path = a;
			continue;
		}
		if (!val)
			return cli_usage_error(cmd, "%s needs a value", a);
		i++;
		if (!strcmp(a, "--pid")) {
			if (parse_u32(cmd, a, val, &o->pid))
				return 2;
		} else if (!strcmp(a, "--tid")) {
			if (parse_u32(cmd, a, val, &o->tid))
				return 2;
		} else if (!strcmp(a, "--threshold")) {
			uint32_t ms;

			if (parse_u32(cmd, a, val, &ms))
				return 2;
			o->threshold_ns = (uint64_t)ms * 1000000ull;
		} else if (diagnose && !strcmp(a, "--at")) {
			if (parse_at(cmd, val, o))
				return 2;
		} else if (diagnose && !strcmp(a, "--mark")) {
			o->mark = val;
		} else if (diagnose && !strcmp(a, "--depth")) {
			if (parse_u32(cmd, a, val, &o->depth) || o->depth > ARGUS_DIAG_MAX_CHAIN)
				return cli_usage_error(cmd, "--depth: 1..%d", ARGUS_DIAG_MAX_CHAIN);
		} else if (diagnose && !strcmp(a, "--pick")) {
			if (parse_picks(cmd, val, o))
				return 2;
		} else {
			return cli_usage_error(cmd, "unknown option '%s'", a);
		}
	}
	if (!o->g.path)
		return cli_usage_error(cmd, "missing trace FILE");
	if (!o->pid)
		return cli_usage_error(cmd, "--pid PID is required (the UI process)");
	if (o->have_at && o->mark)
		return cli_usage_error(cmd, "--at and --mark are exclusive");
	if (o->json && o->dot)
		return cli_usage_error(cmd, "--json and --dot are exclusive");
	return 0;
}

int diag_cli_hangs(struct graph_cli_ctx *c, const char *cmd, struct diag_cli_opts *o,
		   struct argus_hang **h, uint32_t *n)
{
	struct argus_hang_opts ho = { .sz = sizeof(ho), .pid = o->pid, .tid = o->tid,
				      .threshold_ns = o->threshold_ns };
	int rc = argus_diag__hangs(c->g, &ho, h, n);

	if (rc == -ENOENT)
		return cli_error(cmd, "%s: no thread %u of process %u in the trace (see argus dump --stats,"
				 " argus graph --pid)", o->g.path, o->tid ? o->tid : o->pid, o->pid);
	if (rc)
		return cli_error(cmd, "%s: %s", o->g.path, strerror(-rc));
	return 0;
}

static const struct argus_thread *thread_of(struct graph_cli_ctx *c, uint32_t tid)
{
	return argus_graph__thread(c->g, argus_graph__thread_by_tid(c->g, tid));
}

const char *diag_cli_comm(struct graph_cli_ctx *c, uint32_t tid)
{
	return graph_cli_comm(c->g, thread_of(c, tid));
}

const char *diag_cli_process(struct graph_cli_ctx *c, uint32_t tid)
{
	return graph_cli_process(c->g, thread_of(c, tid));
}

static double rel_s(struct graph_cli_ctx *c, uint64_t ts)
{
	uint64_t t0 = argus_graph__stats(c->g)->min_ts;

	return ts >= t0 ? (double)(ts - t0) / 1e9 : 0.0;
}

void diag_cli_print_thread_line(struct graph_cli_ctx *c, uint32_t tid)
{
	const struct argus_thread *t = thread_of(c, tid);

	printf("%s %u/%u (process %s)", diag_cli_comm(c, tid), t ? t->pid : 0, tid,
	       diag_cli_process(c, tid));
}

void diag_cli_print_hang(struct graph_cli_ctx *c, const struct argus_hang *h, uint32_t i)
{
	printf("  #%-3u %10.6f .. %10.6f s  %9.1f ms  segment #%u%s", i, rel_s(c, h->start),
	       rel_s(c, h->end), (double)(h->end - h->start) / 1e6, h->seg,
	       h->ongoing ? "  (still hung at the end of the trace)" : "");
	if (h->annotated) {
		const char *m = argus_trace__string(c->t, h->mark);

		printf("  mark \"%s\"", m ? m : "");
	}
	printf("\n");
}

void diag_cli_json_str(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			printf("\\u%04x", *p);   /* untrusted bytes: never raw */
		else
			putchar(*p);
	}
	putchar('"');
}

void diag_cli_json_hang(struct graph_cli_ctx *c, const struct argus_hang *h, unsigned kind)
{
	printf("{\"pid\":%u,\"tid\":%u,\"comm\":", h->pid, h->tid);
	diag_cli_json_str(diag_cli_comm(c, h->tid));
	printf(",\"process\":");
	diag_cli_json_str(diag_cli_process(c, h->tid));
	printf(",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
	       ",\"ongoing\":%s,\"annotated\":%s,\"segment\":%u",
	       h->start, h->end, h->end - h->start, h->ongoing ? "true" : "false",
	       h->annotated ? "true" : "false", h->seg);
	if (h->annotated) {
		printf(",\"mark\":");
		diag_cli_json_str(argus_trace__string(c->t, h->mark));
	}
	if (kind)
		printf(",\"kind\":\"%s\"", argus_hang_kind_str(kind));
	printf("}");
}

void diag_cli_stack(struct graph_cli_ctx *c, uint32_t pid, uint64_t ts, uint32_t stack,
		    diag_frame_fn fn, void *ctx)
{
	static struct argus_symbolizer *sym;
	const uint64_t *ips;
	uint32_t nr;

	if (!stack || argus_trace__stack(c->t, stack, &ips, &nr))
		return;
	if (!sym)
		sym = argus_symbolizer__new();   /* lives until exit: one CLI run */
	for (uint32_t i = 0; i < nr; i++) {
		struct argus_sym s;
		char buf[512];
		uint64_t ip = i ? ips[i] - 1 : ips[i];  /* return addresses */

		if (!sym || argus_symbolize_trace_ip(sym, c->t, pid, ts, ip, &s) == -EINVAL)
			snprintf(buf, sizeof(buf), "%#" PRIx64, ips[i]);
		else
			argus_sym__format(&s, ip, buf, sizeof(buf));
		fn(ctx, buf);
	}
}
