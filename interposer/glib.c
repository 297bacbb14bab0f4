/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glib.c - GLib work items: main-loop sources, GThreadPool, GTask
 * (docs/interposer.md "GLib").
 *
 * The library does not link GLib: it is preloaded into programs that have
 * none.  The real functions are looked up when a wrapper is first called
 * (which means the caller has GLib): dlsym(RTLD_NEXT), and when GLib was
 * dlopen'ed RTLD_LOCAL (python3-gi loads it with its extension module, out
 * of the global scope RTLD_NEXT searches) dlsym on a RTLD_NOLOAD handle of
 * the library.  The few GLib types used are declared here; their layouts
 * are GLib's public ones (glib/gmain.h, glib/gthreadpool.h).
 *
 * Each exported entry point is wrapped on its own: GLib is linked with
 * -Bsymbolic-functions, so g_idle_add() calls g_idle_add_full() and
 * g_idle_add_full() calls g_source_attach() inside libglib without going
 * through the PLT, where no preload can see them.  Calls from libgio into
 * libglib do go through the PLT (GTask's pool is a GThreadPool).
 *
 * What is recorded (item, kind, callback):
 *   - g_idle_add*, g_timeout_add*, g_timeout_add_seconds*: the callback
 *     and its data are moved into a small wrapper, and GLib gets a
 *     trampoline instead: enqueue (the wrapper, before the real add, so a
 *     dispatch on another thread cannot come first), then begin/end of
 *     every dispatch around the real callback, item = the wrapper.
 *     Limit: g_source_remove_by_user_data(data) and g_idle_remove_by_data
 *     no longer find such a source by the caller's data;
 *   - g_source_attach (any source the program made itself): enqueue (the
 *     GSource), and begin/end around each dispatch.  The source's
 *     GSourceFuncs is replaced by a copy (one per distinct original, kept
 *     forever) whose dispatch is a trampoline: only that source's
 *     dispatch is timed, not the whole g_main_context_dispatch (which
 *     runs every ready source in one call, so it cannot say which item
 *     ran when).  Limit: code that compares source->source_funcs with a
 *     known table (g_source_remove_by_funcs_user_data) no longer matches;
 *     GIOChannel and child-watch sources are not wrapped (GLib's closure
 *     support tells them apart by their table);
 *   - g_thread_pool_new/_new_full: the pool's func is a trampoline, so
 *     each item run is begin/end (item = the data pointer);
 *     g_thread_pool_push: enqueue before the real push.  Limit: the
 *     pool's public fields func and user_data are the trampoline's;
 *   - g_task_run_in_thread/_sync: enqueue (the GTask, its task function);
 *     GLib runs it on its own GThreadPool, whose trampoline records the
 *     begin/end as the task's, with the task function, instead of the
 *     pool's (the task is remembered from enqueue to begin in a small
 *     table; when it is full the run is recorded as a pool item);
 *   - g_module_symbol: girepository (python3-gi) finds GLib's functions
 *     with it, a dlsym on GLib's own handle that never sees a preload; for
 *     the names wrapped here it answers with the wrapper.
 * With recording off every wrapper calls straight through.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipose.h"

/* GLib's types, as far as they are used (public layouts) */
typedef int gboolean;
typedef unsigned int guint;
typedef void *gpointer;
typedef gboolean (*GSourceFunc)(gpointer);
typedef void (*GDestroyNotify)(gpointer);
typedef void (*GFunc)(gpointer data, gpointer user_data);
typedef struct GSource GSource;
typedef struct {
	gboolean (*prepare)(GSource *, int *);
	gboolean (*check)(GSource *);
	gboolean (*dispatch)(GSource *, GSourceFunc, gpointer);
	void (*finalize)(GSource *);
	GSourceFunc closure_callback;
	void *closure_marshal;
} GSourceFuncs;
struct GSource {                /* glib/gmain.h: the leading fields */
	gpointer callback_data;
	void *callback_funcs;
	const GSourceFuncs *source_funcs;
};
typedef struct {                /* glib/gthreadpool.h */
	GFunc func;
	gpointer user_data;
	gboolean exclusive;
} GThreadPool;
typedef void (*GTaskThreadFunc)(void *task, void *source_object, gpointer task_data,
				void *cancellable);

#define G_PRIORITY_DEFAULT 0
#define G_PRIORITY_DEFAULT_IDLE 200

static const char *const glib_libs[] = { "libglib-2.0.so.0", "libgio-2.0.so.0",
					 "libgmodule-2.0.so.0" };

/* The next definition of name after this library, NULL without GLib. */
static void *real(const char *name, unsigned lib)
{
	void *p = dlsym(RTLD_NEXT, name), *h;

	if (p)
		return p;
	h = dlopen(glib_libs[lib], RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	p = dlsym(h, name);
	dlclose(h);     /* NOLOAD took a reference; the library stays */
	return p;
}

#define REAL(var, name, lib)                                      \
	do {                                                      \
		if (UNLIKELY(!(var)))                             \
			*(void **)&(var) = real(name, lib);       \
	} while (0)

/* ---- idle and timeout callbacks ---- */

struct cbwrap {
	GSourceFunc fn;
	gpointer data;
	GDestroyNotify notify;
	uint32_t kind;
};

static gboolean cb_tramp(gpointer p)
{
	struct cbwrap *w = p;
	gboolean r;

	aip_work(AIP_WORK_BEGIN, w, w->kind, (const void *)w->fn);
	r = w->fn(w->data);
	aip_work(AIP_WORK_END, w, w->kind, (const void *)w->fn);
	return r;
}

static void cb_free(gpointer p)
{
	struct cbwrap *w = p;

	if (w->notify)
		w->notify(w->data);
	free(w);
}

/* A wrapper for fn/data, its enqueue recorded; NULL: add unwrapped. */
static struct cbwrap *cb_wrap(GSourceFunc fn, gpointer data, GDestroyNotify notify,
			      uint32_t kind)
{
	struct cbwrap *w;

	if (!aip_ring || !fn || !(w = malloc(sizeof(*w))))
		return NULL;
	*w = (struct cbwrap){ fn, data, notify, kind };
	aip_work(AIP_WORK_ENQUEUE, w, kind, (const void *)fn);
	return w;
}

typedef guint (*idle_full_fn)(int, GSourceFunc, gpointer, GDestroyNotify);
typedef guint (*timeout_full_fn)(int, guint, GSourceFunc, gpointer, GDestroyNotify);
static idle_full_fn real_idle_full;
static timeout_full_fn real_timeout_full, real_timeout_sec_full;

EXPORT guint g_idle_add_full(int prio, GSourceFunc fn, gpointer data, GDestroyNotify notify)
{
	struct cbwrap *w;

	REAL(real_idle_full, "g_idle_add_full", 0);
	if (!real_idle_full)
		return 0;
	if (!(w = cb_wrap(fn, data, notify, AIP_WORK_IDLE)))
		return real_idle_full(prio, fn, data, notify);
	return real_idle_full(prio, cb_tramp, w, cb_free);
}

EXPORT guint g_idle_add(GSourceFunc fn, gpointer data)
{
	return g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, fn, data, NULL);
}

/* A timeout source through real (milliseconds or seconds), its callback
 * wrapped as a work item; unwrapped when no wrapper could be made. */
static guint add_timeout(timeout_full_fn real, int prio, guint n, GSourceFunc fn,
			 gpointer data, GDestroyNotify notify)
{
	struct cbwrap *w;

	if (!real)
		return 0;
	if (!(w = cb_wrap(fn, data, notify, AIP_WORK_TIMEOUT)))
		return real(prio, n, fn, data, notify);
	return real(prio, n, cb_tramp, w, cb_free);
}

EXPORT guint g_timeout_add_full(int prio, guint ms, GSourceFunc fn, gpointer data,
				GDestroyNotify notify)
{
	REAL(real_timeout_full, "g_timeout_add_full", 0);
	return add_timeout(real_timeout_full, prio, ms, fn, data, notify);
}

EXPORT guint g_timeout_add(guint ms, GSourceFunc fn, gpointer data)
{
	return g_timeout_add_full(G_PRIORITY_DEFAULT, ms, fn, data, NULL);
}

EXPORT guint g_timeout_add_seconds_full(int prio, guint s, GSourceFunc fn, gpointer data,
					GDestroyNotify notify)
{
	REAL(real_timeout_sec_full, "g_timeout_add_seconds_full", 0);
	return add_timeout(real_timeout_sec_full, prio, s, fn, data, notify);
}

EXPORT guint g_timeout_add_seconds(guint s, GSourceFunc fn, gpointer data)
{
	return g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, s, fn, data, NULL);
}

/* ---- g_source_attach: a dispatch trampoline per GSourceFuncs ---- */

#define MAX_FUNCS 64

struct fwrap {
	GSourceFuncs copy;      /* first: source_funcs points here */
	const GSourceFuncs *orig;
};

static struct fwrap fwraps[MAX_FUNCS];
static _Atomic unsigned nfwraps;
/* a spin lock, not a pthread mutex: this library wraps those */
static atomic_flag fw_lock = ATOMIC_FLAG_INIT;

static gboolean src_dispatch(GSource *src, GSourceFunc cb, gpointer data)
{
	const struct fwrap *f = (const struct fwrap *)src->source_funcs;
	gboolean r;

	aip_work(AIP_WORK_BEGIN, src, AIP_WORK_SOURCE, (const void *)cb);
	r = f->orig->dispatch(src, cb, data);
	aip_work(AIP_WORK_END, src, AIP_WORK_SOURCE, (const void *)cb);
	return r;
}

static int is_fwrap(const GSourceFuncs *p)
{
	return (const void *)p >= (const void *)fwraps &&
	       (const void *)p < (const void *)(fwraps + MAX_FUNCS);
}

/* The copy of orig with the dispatch trampoline; NULL: table full. */
static const GSourceFuncs *fwrap_of(const GSourceFuncs *orig)
{
	const GSourceFuncs *r = NULL;
	unsigned n;

	while (atomic_flag_test_and_set_explicit(&fw_lock, memory_order_acquire))
		;
	n = atomic_load_explicit(&nfwraps, memory_order_relaxed);
	for (unsigned i = 0; i < n && !r; i++)
		if (fwraps[i].orig == orig)
			r = &fwraps[i].copy;
	if (!r && n < MAX_FUNCS) {
		fwraps[n].copy = *orig;
		fwraps[n].copy.dispatch = src_dispatch;
		fwraps[n].orig = orig;
		atomic_store_explicit(&nfwraps, n + 1, memory_order_relaxed);
		r = &fwraps[n].copy;
	}
	atomic_flag_clear_explicit(&fw_lock, memory_order_release);
	return r;
}

typedef guint (*attach_fn)(GSource *, void *);
static attach_fn real_attach;
static const GSourceFuncs *io_watch_funcs, *child_watch_funcs;

/* GLib's GClosure support (gsourceclosure.c) picks the closure callback of
 * a source with no closure_callback by comparing its source_funcs with
 * these two exported tables: a copy would get the wrong one.  Their
 * sources are left alone. */
static int closure_special(const GSourceFuncs *f)
{
	REAL(io_watch_funcs, "g_io_watch_funcs", 0);
	REAL(child_watch_funcs, "g_child_watch_funcs", 0);
	return !f->closure_callback && (f == io_watch_funcs || f == child_watch_funcs);
}

EXPORT guint g_source_attach(GSource *src, void *context)
{
	REAL(real_attach, "g_source_attach", 0);
	if (!real_attach)
		return 0;
	if (aip_ring && src && src->source_funcs && src->source_funcs->dispatch &&
	    !is_fwrap(src->source_funcs) && !closure_special(src->source_funcs)) {
		const GSourceFuncs *w = fwrap_of(src->source_funcs);

		if (w) {
			aip_work(AIP_WORK_ENQUEUE, src, AIP_WORK_SOURCE, NULL);
			src->source_funcs = w;
		}
	}
	return real_attach(src, context);
}

/* ---- GTask: which task function a queued task runs ---- */

#define MAX_TASKS 256

static struct {
	void *task;
	GTaskThreadFunc fn;
} tasks[MAX_TASKS];
static atomic_flag tk_lock = ATOMIC_FLAG_INIT;

static void tk_lock_take(void)
{
	while (atomic_flag_test_and_set_explicit(&tk_lock, memory_order_acquire))
		;
}

static void tk_lock_drop(void)
{
	atomic_flag_clear_explicit(&tk_lock, memory_order_release);
}

/* remember task -> fn; 0 when the table is full */
static int task_note(void *task, GTaskThreadFunc fn)
{
	int ok = 0;

	tk_lock_take();
	for (unsigned i = 0; i < MAX_TASKS && !ok; i++)
		if (!tasks[i].task) {
			tasks[i].task = task;
			tasks[i].fn = fn;
			ok = 1;
		}
	tk_lock_drop();
	return ok;
}

/* the task function of a noted task (taking it out when take), or NULL */
static GTaskThreadFunc task_find(void *task, int take)
{
	GTaskThreadFunc fn = NULL;

	tk_lock_take();
	for (unsigned i = 0; i < MAX_TASKS && !fn; i++)
		if (tasks[i].task == task) {
			fn = tasks[i].fn;
			if (take)
				tasks[i].task = NULL;
		}
	tk_lock_drop();
	return fn;
}

typedef void (*run_in_thread_fn)(void *, GTaskThreadFunc);
static run_in_thread_fn real_run, real_run_sync;

static void task_enqueue(void *task, GTaskThreadFunc fn)
{
	if (aip_ring && task && fn && task_note(task, fn))
		aip_work(AIP_WORK_ENQUEUE, task, AIP_WORK_TASK, (const void *)fn);
}

EXPORT void g_task_run_in_thread(void *task, GTaskThreadFunc fn)
{
	REAL(real_run, "g_task_run_in_thread", 1);
	if (!real_run)
		return;
	task_enqueue(task, fn);
	real_run(task, fn);
}

EXPORT void g_task_run_in_thread_sync(void *task, GTaskThreadFunc fn)
{
	REAL(real_run_sync, "g_task_run_in_thread_sync", 1);
	if (!real_run_sync)
		return;
	task_enqueue(task, fn);
	real_run_sync(task, fn);
}

/* ---- GThreadPool ---- */

struct poolwrap {
	GFunc func;
	gpointer user_data;
};

static void pool_tramp(gpointer data, gpointer p)
{
	struct poolwrap *w = p;
	GTaskThreadFunc tf = task_find(data, 1);
	uint32_t kind = tf ? AIP_WORK_TASK : AIP_WORK_POOL;
	const void *fn = tf ? (const void *)tf : (const void *)w->func;

	aip_work(AIP_WORK_BEGIN, data, kind, fn);
	w->func(data, w->user_data);
	aip_work(AIP_WORK_END, data, kind, fn);
}

typedef GThreadPool *(*pool_new_fn)(GFunc, gpointer, int, gboolean, void **);
typedef GThreadPool *(*pool_new_full_fn)(GFunc, gpointer, GDestroyNotify, int, gboolean,
					 void **);
typedef gboolean (*pool_push_fn)(GThreadPool *, gpointer, void **);
typedef void (*pool_free_fn)(GThreadPool *, gboolean, gboolean);
static pool_new_fn real_pool_new;
static pool_new_full_fn real_pool_new_full;
static pool_push_fn real_pool_push;
static pool_free_fn real_pool_free;

static struct poolwrap *pool_wrap(GFunc func, gpointer user_data)
{
	struct poolwrap *w;

	if (!aip_ring || !func || !(w = malloc(sizeof(*w))))
		return NULL;
	*w = (struct poolwrap){ func, user_data };
	return w;
}

EXPORT GThreadPool *g_thread_pool_new(GFunc func, gpointer user_data, int max_threads,
				      gboolean exclusive, void **error)
{
	struct poolwrap *w;
	GThreadPool *p;

	REAL(real_pool_new, "g_thread_pool_new", 0);
	if (!real_pool_new)
		return NULL;
	if (!(w = pool_wrap(func, user_data)))
		return real_pool_new(func, user_data, max_threads, exclusive, error);
	p = real_pool_new(pool_tramp, w, max_threads, exclusive, error);
	if (!p)
		free(w);
	return p;
}

EXPORT GThreadPool *g_thread_pool_new_full(GFunc func, gpointer user_data,
					   GDestroyNotify item_free, int max_threads,
					   gboolean exclusive, void **error)
{
	struct poolwrap *w;
	GThreadPool *p;

	REAL(real_pool_new_full, "g_thread_pool_new_full", 0);
	if (!real_pool_new_full)
		return NULL;
	if (!(w = pool_wrap(func, user_data)))
		return real_pool_new_full(func, user_data, item_free, max_threads, exclusive,
					  error);
	p = real_pool_new_full(pool_tramp, w, item_free, max_threads, exclusive, error);
	if (!p)
		free(w);
	return p;
}

EXPORT gboolean g_thread_pool_push(GThreadPool *pool, gpointer data, void **error)
{
	REAL(real_pool_push, "g_thread_pool_push", 0);
	if (!real_pool_push)
		return 0;
	/* a GTask's enqueue is already recorded, as the task's */
	if (aip_ring && pool && pool->func == pool_tramp && !task_find(data, 0))
		aip_work(AIP_WORK_ENQUEUE, data, AIP_WORK_POOL,
			 (const void *)((struct poolwrap *)pool->user_data)->func);
	return real_pool_push(pool, data, error);
}

EXPORT void g_thread_pool_free(GThreadPool *pool, gboolean immediate, gboolean wait)
{
	struct poolwrap *w = pool && pool->func == pool_tramp ? pool->user_data : NULL;

	REAL(real_pool_free, "g_thread_pool_free", 0);
	if (!real_pool_free)
		return;
	real_pool_free(pool, immediate, wait);
	/* without wait, workers may still run items after the call: the
	 * wrapper is leaked rather than freed under them */
	if (wait)
		free(w);
}

/* ---- girepository's lookups ---- */

typedef gboolean (*module_symbol_fn)(void *, const char *, gpointer *);
static module_symbol_fn real_module_symbol;

EXPORT gboolean g_module_symbol(void *module, const char *name, gpointer *symbol)
{
	static const struct {
		const char *name;
		void *fn;
	} ours[] = {
		{ "g_idle_add_full", (void *)g_idle_add_full },
		{ "g_idle_add", (void *)g_idle_add },
		{ "g_timeout_add_full", (void *)g_timeout_add_full },
		{ "g_timeout_add", (void *)g_timeout_add },
		{ "g_timeout_add_seconds_full", (void *)g_timeout_add_seconds_full },
		{ "g_timeout_add_seconds", (void *)g_timeout_add_seconds },
		{ "g_source_attach", (void *)g_source_attach },
		{ "g_thread_pool_new", (void *)g_thread_pool_new },
		{ "g_thread_pool_new_full", (void *)g_thread_pool_new_full },
		{ "g_thread_pool_push", (void *)g_thread_pool_push },
		{ "g_thread_pool_free", (void *)g_thread_pool_free },
		{ "g_task_run_in_thread", (void *)g_task_run_in_thread },
		{ "g_task_run_in_thread_sync", (void *)g_task_run_in_thread_sync },
	};
	gboolean ok;

	REAL(real_module_symbol, "g_module_symbol", 2);
	if (!real_module_symbol)
		return 0;
	ok = real_module_symbol(module, name, symbol);
	if (!ok || !aip_ring || !name || !symbol)
		return ok;
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!strcmp(name, ours[i].name)) {
			*symbol = ours[i].fn;
			break;
		}
	return ok;
}
