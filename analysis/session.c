/* session.c - see argus_session.h.
 *
 * Each call: the words are parsed by diag_front_parse (the tables of
 * diagnose's, hangs' and report's flags, parse_opts.h); the graph is built by
 * graph_open_trace unless the session already holds the one of that
 * FILE, --schema and --no-split; then the analysis runs -- diag_front_hangs,
 * diag_run or report_page_write with a memory stream as its output --
 * with msg_err() pointed at a second memory stream, whose text becomes
 * argus_session__error().  Nothing reaches the process's stdout or
 * stderr (but the questions of an interactive session).
 *
 * The thread hangs of the last __hangs call are kept with the options they
 * were found with: a __diagnose with the same ones (the lldb plugin lists
 * them, picks one, then diagnoses it) chooses from them instead of finding
 * them again. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "progress.h"
#include "diag_front.h"
#include "argus_session.h"
#include "diag_run.h"
#include "graph_open.h"
#include "ctl_client.h"
#include "report_page.h"
#include "until_end.h"

struct argus_session {
	struct graph_open_ctx c;
	bool open;                 /* c holds a graph built from: */
	char *path;                /*   FILE */
	char *schema;              /*   --schema FILE, NULL none */
	bool no_split;             /*   --no-split */
	bool have_hangs;           /* hangs: the thread hangs found with ho */
	struct argus_hang_opts ho;
	struct argus_hang *hangs;
	uint32_t nhangs;
	char *error;               /* the last call's messages, "" none */
	bool interactive;          /* diag_run asks at a choice (DIAG_RUN_TTY) */
	bool progress;             /* progress lines on a terminal stderr */
};

/* The report and everything its pointers reach. */
struct report {
	struct argus_diag_report pub;          /* first: the caller's pointer */
	char *text;
	struct argus_diag_thread threads[ARGUS_DIAG_MAX_CHAIN + 1];
	struct argus_diag_frame *frames[ARGUS_DIAG_MAX_CHAIN];
	struct argus_diag_choice choices[DIAG_RUN_MAX_CHOICES];
	struct diag_run run;                   /* owns the frames' and choices' strings */
	struct until_end *ue;                  /* --until-end: what the wait saw */
};

static pthread_mutex_t query_lock = PTHREAD_MUTEX_INITIALIZER;

/* A call's message stream (msg_err) while the lock is held. */
struct call {
	FILE *err;
	char *buf;
	size_t len;
};

static int call_begin(struct argus_session *q, struct call *k)
{
	pthread_mutex_lock(&query_lock);
	free(q->error);
	q->error = NULL;
	k->buf = NULL;
	k->len = 0;
	k->err = open_memstream(&k->buf, &k->len);
	if (!k->err) {
		pthread_mutex_unlock(&query_lock);
		return -ENOMEM;
	}
	msg_set_err(k->err);
	progress_set_terminal(q->progress);
	return 0;
}

static int call_end(struct argus_session *q, struct call *k, int rc)
{
	msg_set_err(NULL);
	progress_set_terminal(false);
	if (fclose(k->err) && !rc)
		rc = -ENOMEM;
	q->error = k->buf;
	pthread_mutex_unlock(&query_lock);
	return rc;
}

/* The CLI's exit code as -errno: 2 is a usage error, 3 a thread asleep
 * from before the trace (DIAG_RUN_BEFORE_TRACE). */
static int from_exit(int rc)
{
	return rc == 2 ? -EINVAL : rc == DIAG_RUN_BEFORE_TRACE ? -ENODATA : rc ? -EIO : 0;
}

/* diag_front_parse's answer as -errno: -EINVAL for a usage error, and for
 * --help too, which is the CLI's to handle (the help went to stdout). */
static int from_parse(int rc)
{
	return rc ? -EINVAL : 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Makes sure q->c holds the graph of o's FILE, --schema, --no-split, and
 * resolves --live as every front end does. */
static int open_graph(struct argus_session *q, const char *cmd, struct diag_front_opts *o)
{
	int rc;

	if (q->open && same_str(q->path, o->g.path) && same_str(q->schema, o->g.schema_path) &&
	    q->no_split == o->g.no_split) {
		diag_front_resolve_live(&q->c, o);
		return 0;
	}
	if (q->open) {
		graph_open_close(&q->c);
		q->open = false;
	}
	free(q->path);
	free(q->schema);
	free(q->hangs);
	q->hangs = NULL;
	q->have_hangs = false;
	q->path = strdup(o->g.path);
	q->schema = o->g.schema_path ? strdup(o->g.schema_path) : NULL;
	q->no_split = o->g.no_split;
	if (!q->path || (o->g.schema_path && !q->schema))
		return -ENOMEM;
	if ((rc = graph_open_trace(&q->c, cmd, &o->g)))
		return from_exit(rc);
	q->open = true;
	diag_front_resolve_live(&q->c, o);
	return 0;
}

/* Parses the words of cmd ("diagnose", "hangs", "report": diagnose's
 * flags unless "hangs") and makes sure q->c holds their graph. */
static int prepare(struct argus_session *q, const char *cmd, int argc, char **argv,
		   struct diag_front_opts *o)
{
	int rc;

	if (argc < 1 || !argv) {
		msg_usage_error(cmd, "missing trace FILE");
		return -EINVAL;
	}
	if ((rc = diag_front_parse(cmd, argc, argv, o)))
		return from_parse(rc);
	if (!o->g.path) {
		msg_usage_error(cmd, "missing trace FILE");
		return -EINVAL;
	}
	return open_graph(q, cmd, o);
}

/* --until-end: on the snapshot FILE (just taken by the caller), wait for
 * the hang going on to end, then replace FILE with a snapshot of the same
 * window up to now and build its graph (until_end.h).  0 or -errno. */
static int wait_until_end(struct argus_session *q, struct diag_front_opts *o,
			  struct until_end *ue)
{
	int rc;

	if ((rc = until_end_begin("diagnose", ue, o->until_end_ns)))
		return from_exit(rc);
	rc = until_end_wait("diagnose", &q->c, o, ue);
	if (rc || !ue->ongoing) {
		until_end_cleanup(ue);
		return from_exit(rc);
	}
	/* the first snapshot's graph goes, with the hangs found in it */
	graph_open_close(&q->c);
	q->open = false;
	free(q->hangs);
	q->hangs = NULL;
	q->have_hangs = false;
	/* the snapshot that showed the end becomes FILE, its graph kept
	 * (FILE's dir is the caller's, usually on the same file system);
	 * else a new snapshot into FILE */
	if (until_end_take_graph(ue, &q->c)) {
		if (!rename(ue->check, o->g.path)) {
			q->open = true;
			until_end_cleanup(ue);
			return 0;
		}
		graph_open_close(&q->c);
	}
	until_end_cleanup(ue);          /* its dir only held the checks */
	if ((rc = until_end_snapshot("diagnose", ue, o->g.path)) ||
	    (rc = graph_open_trace(&q->c, "diagnose", &o->g)))
		return from_exit(rc);
	q->open = true;
	return 0;
}

static bool same_hang_opts(const struct argus_hang_opts *a, const struct argus_hang_opts *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->threshold_ns == b->threshold_ns &&
	       a->scope == b->scope && a->idle_rule == b->idle_rule &&
	       a->deliberate == b->deliberate;
}

struct argus_session *argus_session__new(void)
{
	struct argus_session *q = calloc(1, sizeof(*q));

	if (!q)
		errno = ENOMEM;
	return q;
}

void argus_session__free(struct argus_session *q)
{
	if (!q)
		return;
	if (q->open)
		graph_open_close(&q->c);
	free(q->path);
	free(q->schema);
	free(q->hangs);
	free(q->error);
	free(q);
}

const char *argus_session__error(const struct argus_session *q)
{
	return q && q->error ? q->error : "";
}

int argus_session__hangs(struct argus_session *q, int argc, char **argv,
			    struct argus_hang **hangs, uint32_t *n)
{
	struct diag_front_opts o;
	struct argus_hang *h = NULL;
	struct call k;
	uint32_t nh = 0;
	int rc;

	if (!q || !hangs || !n)
		return -EINVAL;
	*hangs = NULL;
	*n = 0;
	if ((rc = call_begin(q, &k)))
		return rc;
	if ((rc = prepare(q, "diagnose", argc, argv, &o)))
		return call_end(q, &k, rc);
	if ((rc = diag_front_hangs(&q->c, "diagnose", &o, ARGUS_HANGS_THREAD, &h, &nh)))
		return call_end(q, &k, from_exit(rc));
	free(q->hangs);
	q->hangs = NULL;
	q->have_hangs = false;
	if (nh && !(*hangs = malloc(nh * sizeof(*h)))) {
		free(h);
		return call_end(q, &k, -ENOMEM);
	}
	if (nh)
		memcpy(*hangs, h, nh * sizeof(*h));
	*n = nh;
	q->hangs = h;
	q->nhangs = nh;
	q->ho = diag_front_hang_opts(&o, ARGUS_HANGS_THREAD);
	q->have_hangs = true;
	return call_end(q, &k, 0);
}

/* The report's threads and choices, pointing into r->run. */
static void fill(struct report *r)
{
	const struct argus_diagnosis *d = r->run.d;
	struct argus_diag_thread *t = r->threads;

	r->pub.diag = *d;
	r->pub.nhangs = r->run.nhangs;
	r->pub.picked = r->run.picked;
	t[0] = (struct argus_diag_thread){ .label = "hang", .pid = d->hang.pid, .tid = d->hang.tid,
					   .chain = UINT32_MAX };
	for (uint32_t i = 0; i < d->nchain; i++) {
		const struct argus_culprit *k = &d->chain[i];
		const struct diag_run_stack *st = &r->run.stacks[i];
		struct argus_diag_thread *ti = &t[i + 1];

		*ti = (struct argus_diag_thread){ .label = i ? "then" : "culprit", .pid = k->pid,
						  .tid = k->tid, .chain = i, .cycle = k->cycle };
		/* a cycle entry is the thread named above again: the report
		 * shows no stack under it */
		if (k->cycle || !st->n || !(r->frames[i] = calloc(st->n, sizeof(*r->frames[i]))))
			continue;
		for (uint32_t j = 0; j < st->n; j++)
			r->frames[i][j] = (struct argus_diag_frame){ .text = st->f[j].text,
								     .func = st->f[j].func };
		ti->frames = r->frames[i];
		ti->nframes = st->n;
	}
	r->pub.threads = t;
	r->pub.nthreads = d->nchain + 1;
	for (uint32_t i = 0; i < r->run.nchoices; i++) {
		const struct diag_choice *c = &r->run.choices[i];

		r->choices[i] = (struct argus_diag_choice){ .seg = c->seg, .edge = c->edge,
							    .pick = c->pick, .pid = c->pid,
							    .tid = c->tid, .text = c->text };
	}
	r->pub.choices = r->choices;
	r->pub.nchoices = r->run.nchoices;
}

int argus_session__diagnose(struct argus_session *q, int argc, char **argv,
			       struct argus_diag_report **out)
{
	struct diag_front_opts o;
	struct report *r;
	struct call k;
	struct argus_hang_opts ho;
	FILE *f;
	size_t len = 0;
	bool reuse;
	int rc;

	if (!q || !out)
		return -EINVAL;
	*out = NULL;
	if (!(r = calloc(1, sizeof(*r))))
		return -ENOMEM;
	if ((rc = call_begin(q, &k))) {
		free(r);
		return rc;
	}
	if ((rc = prepare(q, "diagnose", argc, argv, &o))) {
		free(r);
		return call_end(q, &k, rc);
	}
	if (o.until_end_ns) {
		if (!(r->ue = calloc(1, sizeof(*r->ue))))
			rc = -ENOMEM;
		else if (!(rc = wait_until_end(q, &o, r->ue)))
			until_end_annotate(&q->c, &o, r->ue);
		if (rc) {
			argus_diag_report__free(&r->pub);
			return call_end(q, &k, rc);
		}
	}
	if (!(f = open_memstream(&r->text, &len))) {
		argus_diag_report__free(&r->pub);
		return call_end(q, &k, -ENOMEM);
	}
	ho = diag_front_hang_opts(&o, ARGUS_HANGS_THREAD);
	reuse = q->have_hangs && q->nhangs && same_hang_opts(&ho, &q->ho);
	rc = from_exit(diag_run(&q->c, &o, reuse ? q->hangs : NULL, reuse ? q->nhangs : 0,
				DIAG_RUN_STACKS | (q->interactive ? DIAG_RUN_TTY : 0), f,
				&r->run));
	if (fclose(f) && !rc)
		rc = -ENOMEM;
	if (!rc && !r->run.d)
		rc = -EIO;
	if (rc) {
		argus_diag_report__free(&r->pub);
		return call_end(q, &k, rc);
	}
	r->pub.text = r->text;
	fill(r);
	*out = &r->pub;
	return call_end(q, &k, 0);
}

void argus_diag_report__free(struct argus_diag_report *pub)
{
	struct report *r = (struct report *)pub;

	if (!r)
		return;
	for (uint32_t i = 0; i < ARGUS_DIAG_MAX_CHAIN; i++)
		free(r->frames[i]);
	diag_run_free(&r->run);
	free(r->text);
	free(r->ue);
	free(r);
}

/* ---- hooks ---- */

void argus_session__set_symbolizer(argus_session_sym_fn fn, void *ctx)
{
	pthread_mutex_lock(&query_lock);
	diag_front_set_symbolizer(fn, ctx);
	pthread_mutex_unlock(&query_lock);
}

void argus_session__set_bin_dir(const char *dir)
{
	pthread_mutex_lock(&query_lock);
	ctl_set_bin_dir(dir);
	pthread_mutex_unlock(&query_lock);
}

void argus_session__set_until_end_tick(argus_session_tick_fn fn, void *ctx)
{
	pthread_mutex_lock(&query_lock);
	until_end_set_tick(fn, ctx);
	pthread_mutex_unlock(&query_lock);
}

void argus_session__set_interactive(struct argus_session *q, bool on)
{
	if (q)
		q->interactive = on;
}

void argus_session__set_progress(struct argus_session *q, bool on)
{
	if (q)
		q->progress = on;
}

int argus_session__check_words(struct argus_session *q, int argc, char **argv)
{
	struct diag_front_opts o;
	struct call k;
	int rc;

	if (!q || argc < 1 || !argv)
		return -EINVAL;
	if ((rc = call_begin(q, &k)))
		return rc;
	rc = from_parse(diag_front_parse(argv[0], argc, argv, &o));
	return call_end(q, &k, rc);
}

/* ---- the live ring ---- */

int argus_session__save_live(struct argus_session *q, const char *out, unsigned out_flags,
			     uint64_t last_ns, uint64_t *from_ts)
{
	uint64_t from = 0;
	struct call k;
	int rc;

	if (!q || !out)
		return -EINVAL;
	if ((rc = call_begin(q, &k)))
		return rc;
	rc = from_exit(ctl_ring_save("save", out, out_flags, last_ns, &from, false));
	if (!rc && from_ts)
		*from_ts = from;
	return call_end(q, &k, rc);
}

/* ---- hangs, any scope ---- */

struct hang_list {
	struct argus_hang_list pub;            /* first: the caller's pointer */
	char *text;
};

int argus_session__list_hangs(struct argus_session *q, int argc, char **argv,
			      struct argus_hang_list **out)
{
	struct diag_front_opts o;
	struct hang_list *l;
	struct call k;
	size_t len = 0;
	FILE *f;
	int rc;

	if (!q || !out)
		return -EINVAL;
	*out = NULL;
	if (!(l = calloc(1, sizeof(*l))))
		return -ENOMEM;
	if ((rc = call_begin(q, &k))) {
		free(l);
		return rc;
	}
	if ((rc = prepare(q, "hangs", argc, argv, &o)))
		goto fail;
	l->pub.scope = o.tid ? ARGUS_HANGS_THREAD : o.pid ? ARGUS_HANGS_PROCESS : ARGUS_HANGS_MACHINE;
	if ((rc = from_exit(diag_front_hangs(&q->c, "hangs", &o, l->pub.scope, &l->pub.hangs,
					     &l->pub.n))))
		goto fail;
	if (!(f = open_memstream(&l->text, &len))) {
		rc = -ENOMEM;
		goto fail;
	}
	diag_front_print_hangs(f, &q->c, &o, l->pub.scope, l->pub.hangs, l->pub.n);
	if (fclose(f)) {
		rc = -ENOMEM;
		goto fail;
	}
	l->pub.text = l->text;
	*out = &l->pub;
	return call_end(q, &k, 0);
fail:
	argus_hang_list__free(&l->pub);
	return call_end(q, &k, rc);
}

void argus_hang_list__free(struct argus_hang_list *pub)
{
	struct hang_list *l = (struct hang_list *)pub;

	if (!l)
		return;
	free(l->pub.hangs);
	free(l->text);
	free(l);
}

/* ---- the report page ---- */

int argus_session__report(struct argus_session *q, int argc, char **argv, char **summary)
{
	struct diag_front_opts o;
	struct report_page_args ra;
	struct argus_hang_opts ho;
	struct call k;
	int rc;
	bool reuse;

	if (!q || !summary || argc < 1 || !argv)
		return -EINVAL;
	*summary = NULL;
	if ((rc = call_begin(q, &k)))
		return rc;
	if ((rc = from_parse(diag_front_parse("report", argc, argv, &o))))
		goto out;
	ra = (struct report_page_args){ .out = o.out, .out_flags = o.out_flags };
	if (!o.g.path) {
		rc = from_exit(msg_usage_error("report", "missing trace FILE"));
		goto out;
	}
	/* a refused -o costs no graph */
	if ((rc = from_exit(report_page_check(&o, &ra))) || (rc = open_graph(q, "report", &o)))
		goto out;
	ho = diag_front_hang_opts(&o, ARGUS_HANGS_THREAD);
	reuse = q->have_hangs && q->nhangs && same_hang_opts(&ho, &q->ho);
	rc = from_exit(report_page_write(&q->c, &o, reuse ? q->hangs : NULL, reuse ? q->nhangs : 0,
					 &ra, summary));
out:
	return call_end(q, &k, rc);
}

int argus_session__run(struct argus_session *q, int argc, char **argv)
{
	struct argus_diag_report *rep = NULL;
	struct argus_hang_list *l = NULL;
	char *summary = NULL;
	const char *text = NULL;
	int rc;

	if (!q || argc < 1 || !argv)
		return 1;
	if (!strcmp(argv[0], "hangs"))
		rc = argus_session__list_hangs(q, argc, argv, &l);
	else if (!strcmp(argv[0], "report"))
		rc = argus_session__report(q, argc, argv, &summary);
	else
		rc = argus_session__diagnose(q, argc, argv, &rep);
	text = rep ? rep->text : l ? l->text : summary;
	if (!rc && text)
		fputs(text, stdout);
	else
		fputs(argus_session__error(q), stderr);
	argus_diag_report__free(rep);
	argus_hang_list__free(l);
	free(summary);
	return rc == -EINVAL ? 2 : rc == -ENODATA ? DIAG_RUN_BEFORE_TRACE : rc ? 1 : 0;
}
