/* fuzz_schema.c - libFuzzer target: any bytes, parsed as a user schema
 * (docs/schema.md).
 *
 * The parser must never crash, read out of bounds or hang.  It either
 * returns a schema whose rules keep the invariants of graphlib/schema.h, or
 * NULL with one NUL-terminated line that names the input and the line.
 * The rules it returns are then matched against a few events, so the
 * matcher sees every spec the parser can produce.  The holder rules keep
 * the invariants of schema_holder.c, and the same bytes are read as a
 * holder command's output (argus_holder__parse_pids), which must answer
 * pids in range or an error, never more than it was given room for. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "argus_events.h"
#include "argus_holder_rule.h"
#include "schema.h"

#define EXPECT(c) do { if (!(c)) __builtin_trap(); } while (0)

static volatile uint64_t sink;

static void check_glob(const char *g)
{
	EXPECT(memchr(g, 0, SCHEMA_GLOB_LEN));
}

static void check_spec(const struct schema_event_spec *sp)
{
	static const char *const texts[] = { NULL, "", "post 42", " a\tb " };
	struct argus_event ev;

	EXPECT(sp->type > 0 && sp->type < AE_TYPE_MAX && sp->type != AE_LOST);
	EXPECT(sp->sys_nr >= -1);
	EXPECT(memchr(sp->word, 0, SCHEMA_WORD_LEN));
	check_glob(sp->process);
	check_glob(sp->thread);
	memset(&ev, 0, sizeof(ev));
	ev.type = sp->type;
	ev.pid = sp->pid;
	for (size_t i = 0; i < 4; i++) {
		sink += (uint64_t)schema_match_event(sp, &ev, "p", texts[i],
						     texts[i]);
		sink += (uint64_t)schema_match_event(sp, &ev, texts[i], NULL,
						     texts[i]);
	}
}

static void check_holder(const struct argus_holder_rule *r)
{
	char out[64];

	EXPECT(r->line >= 1);
	EXPECT(r->timeout_ms >= 1 && r->timeout_ms <= ARGUS_HOLDER_MAX_TIMEOUT_MS);
	EXPECT(r->nfuncs >= 1 && r->nfuncs <= ARGUS_HOLDER_MAX_FUNCS);
	for (uint32_t i = 0; i < r->nfuncs; i++) {
		size_t n = strlen(r->funcs[i]);

		EXPECT(n >= 1 && n < ARGUS_HOLDER_FUNC_LEN);
		EXPECT(!strchr(r->funcs[i], ',') && !strchr(r->funcs[i], '='));
	}
	EXPECT(r->argc >= 1 && r->argc <= ARGUS_HOLDER_MAX_ARGS && !r->argv[r->argc]);
	EXPECT(!strchr(r->argv[0], '%'));
	EXPECT(r->argv[0][0] == '/' ? r->argv[0][1] != 0 : !strchr(r->argv[0], '/'));
	for (uint32_t i = 1; i < r->argc; i++) {
		int rc = argus_holder__expand(r->argv[i], 4194304, 1, out, sizeof(out));

		EXPECT(rc == 0 || rc == -ENAMETOOLONG);
		if (!rc)
			EXPECT(memchr(out, 0, sizeof(out)));
	}
	EXPECT(memchr(r->process, 0, sizeof(r->process)));
	EXPECT(memchr(r->user, 0, sizeof(r->user)));
	EXPECT(strcmp(r->user, "root"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t pids[ARGUS_HOLDER_MAX_PIDS];
	struct argus_error err;
	struct argus_schema *s;
	int np;

	np = argus_holder__parse_pids((const char *)data, size, pids, ARGUS_HOLDER_MAX_PIDS);
	EXPECT(np == -EINVAL || np == -E2BIG || (np >= 0 && np <= ARGUS_HOLDER_MAX_PIDS));
	for (int i = 0; i < np; i++)
		EXPECT(pids[i] >= 1 && pids[i] <= 4194304);
	s = argus_schema__parse((const char *)data, size, "fuzz", &err);
	if (!s) {
		EXPECT(err.code < 0);
		EXPECT(memchr(err.msg, 0, sizeof(err.msg)));
		EXPECT(!strchr(err.msg, '\n'));
		EXPECT(!strncmp(err.msg, "fuzz:", 5));
		return 0;
	}
	EXPECT(s->nboundaries + s->nedges + s->nfilters <= SCHEMA_MAX_RULES);
	for (uint32_t i = 0; i < s->nboundaries; i++) {
		const struct schema_boundary *b = &s->boundaries[i];

		EXPECT(b->where == SCHEMA_BEFORE || b->where == SCHEMA_AFTER);
		EXPECT(b->line >= 1);
		check_spec(&b->ev);
	}
	for (uint32_t i = 0; i < s->nedges; i++) {
		const struct schema_edge *e = &s->edges[i];
		struct argus_event ev;

		EXPECT(e->type == ARGUS_EDGE_CUSTOM ||
		       e->type == ARGUS_EDGE_WORKITEM ||
		       e->type == ARGUS_EDGE_DATAFLAG ||
		       e->type == ARGUS_EDGE_MESSAGE);
		EXPECT(schema_attr_valid(e->src_attr, e->src.type));
		EXPECT(schema_attr_valid(e->dst_attr, e->dst.type));
		EXPECT((e->src_attr == SCHEMA_ATTR_VALUE) ==
		       (e->dst_attr == SCHEMA_ATTR_VALUE));
		EXPECT(e->many <= 1);
		check_spec(&e->src);
		check_spec(&e->dst);
		memset(&ev, 0, sizeof(ev));
		ev.type = e->src.type;
		sink += schema_attr(e->src_attr, &ev, "w v");
		ev.type = e->dst.type;
		sink += schema_attr(e->dst_attr, &ev, NULL);
	}
	for (uint32_t i = 0; i < s->nfilters; i++) {
		const struct schema_filter *f = &s->filters[i];

		EXPECT(f->kind >= SCHEMA_FILTER_WAKER &&
		       f->kind <= SCHEMA_FILTER_KERNEL);
		check_glob(f->process);
		check_glob(f->thread);
		EXPECT(f->process[0] || f->thread[0]);
		sink += (uint64_t)schema_filter_match(f, "p", NULL);
	}
	EXPECT(argus_schema__nholders(s) <= ARGUS_HOLDER_MAX_RULES);
	for (uint32_t i = 0; i < argus_schema__nholders(s); i++)
		check_holder(argus_schema__holder(s, i));
	argus_schema__free(s);
	return 0;
}
