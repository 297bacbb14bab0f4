/* hangs_saved.c - `argus hangs --saved [--hang-dir D] [--json]`: the hang
 * snapshots argusd kept by itself (collector/hang_keep.h), newest first, with
 * what each .json beside them says: when, which process and thread, how
 * long, what kind of hang, and the culprit `argus diagnose` named.
 *
 * The directory: --hang-dir, else the one the running collector reports
 * (status "hang_dir="), else /var/lib/argus/hangs.
 *
 * The .json files are argusd's own, but they are read as untrusted input:
 * a small JSON parser below (values kept as a tree of nodes), and a file
 * that does not parse is listed with what the file name tells.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "control.h"
#include "hang_keep.h"

#include "hangs_saved.h"

/* ---- a small JSON reader ---- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jnode {
	enum jtype type;
	char *key;            /* member name inside an object, else NULL */
	char *str;            /* J_STR */
	double num;           /* J_NUM, J_BOOL */
	struct jnode *kids;   /* J_ARR, J_OBJ: first child */
	struct jnode *next;   /* next sibling */
};

struct jparser {
	const char *p, *end;
	int depth;
};

static void jfree(struct jnode *n)
{
	while (n) {
		struct jnode *next = n->next;
		jfree(n->kids);
		free(n->key);
		free(n->str);
		free(n);
		n = next;
	}
}

static void jspace(struct jparser *j)
{
	while (j->p < j->end && strchr(" \t\r\n", *j->p))
		j->p++;
}

static char *jstring(struct jparser *j)
{
	size_t cap = 32, n = 0;
	char *s;

	if (j->p >= j->end || *j->p != '"')
		return NULL;
	j->p++;
	s = malloc(cap);
	if (!s)
		return NULL;
	while (j->p < j->end && *j->p != '"') {
		char c = *j->p++;

		if (c == '\\') {
			if (j->p >= j->end)
				break;
			c = *j->p++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned v = 0;
				if (j->end - j->p < 4 || sscanf(j->p, "%4x", &v) != 1)
					goto bad;
				j->p += 4;
				c = v < 0x80 ? (char)v : '?'; /* names here are ASCII */
				break;
			}
			default: break; /* \" \\ \/ */
			}
		}
		if (n + 2 > cap) {
			char *t = realloc(s, cap *= 2);
			if (!t)
				goto bad;
			s = t;
		}
		s[n++] = c;
	}
	if (j->p >= j->end)
		goto bad;
	j->p++;
	s[n] = 0;
	return s;
bad:
	free(s);
	return NULL;
}

static struct jnode *jvalue(struct jparser *j)
{
	struct jnode *n;

	jspace(j);
	if (j->p >= j->end || ++j->depth > 64)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	if (*j->p == '{' || *j->p == '[') {
		bool obj = *j->p == '{';
		struct jnode **tail = &n->kids;

		n->type = obj ? J_OBJ : J_ARR;
		j->p++;
		jspace(j);
		if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
			j->p++;
			goto done;
		}
		for (;;) {
			char *key = NULL;
			struct jnode *k;

			jspace(j);
			if (obj) {
				if (!(key = jstring(j)))
					goto bad;
				jspace(j);
				if (j->p >= j->end || *j->p != ':') {
					free(key);
					goto bad;
				}
				j->p++;
			}
			k = jvalue(j);
			if (!k) {
				free(key);
				goto bad;
			}
			k->key = key;
			*tail = k;
			tail = &k->next;
			jspace(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
				j->p++;
				break;
			}
			goto bad;
		}
	} else if (*j->p == '"') {
		n->type = J_STR;
		if (!(n->str = jstring(j)))
			goto bad;
	} else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "false", 5)) {
		n->type = J_BOOL;
		n->num = *j->p == 't';
		j->p += *j->p == 't' ? 4 : 5;
	} else if (!strncmp(j->p, "null", 4)) {
		n->type = J_NULL;
		j->p += 4;
	} else {
		char *e;
		n->type = J_NUM;
		n->num = strtod(j->p, &e);
		if (e == j->p || e > j->end)
			goto bad;
		j->p = e;
	}
done:
	j->depth--;
	return n;
bad:
	jfree(n);
	return NULL;
}

static struct jnode *jparse(const char *s, size_t len)
{
	struct jparser j = { s, s + len, 0 };
	struct jnode *n = jvalue(&j);

	jspace(&j);
	if (n && j.p != j.end) {
		jfree(n);
		return NULL;
	}
	return n;
}

/* obj.key, or NULL (also when obj is not an object) */
static const struct jnode *jget(const struct jnode *obj, const char *key)
{
	if (!obj || obj->type != J_OBJ)
		return NULL;
	for (const struct jnode *k = obj->kids; k; k = k->next)
		if (k->key && !strcmp(k->key, key))
			return k;
	return NULL;
}

static const char *jstr(const struct jnode *obj, const char *key)
{
	const struct jnode *n = jget(obj, key);
	return n && n->type == J_STR ? n->str : NULL;
}

static bool jnum(const struct jnode *obj, const char *key, double *v)
{
	const struct jnode *n = jget(obj, key);

	if (!n || (n->type != J_NUM && n->type != J_BOOL))
		return false;
	*v = n->num;
	return true;
}

/* ---- the listing ---- */

struct saved {
	const struct argus_hang_file *f;
	struct jnode *meta;     /* the .json, NULL if missing or unreadable */
	char why[128];          /* why meta is NULL */
};

static void json_out_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static struct jnode *read_meta(const char *dir, const struct argus_hang_file *f, char *why,
			       size_t wlen)
{
	char path[4400];
	struct jnode *n;
	size_t len = 0;
	char *buf;
	FILE *in;

	if (!f->has_json) {
		snprintf(why, wlen, "no .json yet (diagnosis under way, or it failed)");
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%.*s.json", dir, (int)(strlen(f->name) - 6), f->name);
	in = fopen(path, "re");
	if (!in) {
		snprintf(why, wlen, "cannot read its .json: %s", strerror(errno));
		return NULL;
	}
	buf = malloc(64u << 20);
	if (!buf) {
		fclose(in);
		snprintf(why, wlen, "out of memory");
		return NULL;
	}
	len = fread(buf, 1, (64u << 20) - 1, in);
	fclose(in);
	n = jparse(buf, len);
	free(buf);
	if (!n || n->type != J_OBJ) {
		jfree(n);
		snprintf(why, wlen, "its .json is not a JSON object");
		return NULL;
	}
	return n;
}

/* The hang's kind: the diagnosis's, else what was seen live. */
static const char *kind_of(const struct jnode *m)
{
	const struct jnode *d = jget(m, "diagnosis");
	const char *k = jstr(jget(d, "hang"), "kind");

	return k ? k : jstr(jget(m, "live"), "kind");
}

static void print_text(const char *dir, struct saved *v, size_t n)
{
	printf("%zu hang snapshot%s in %s, newest first\n", n, n == 1 ? "" : "s", msg_tstr(dir));
	for (size_t i = 0; i < n; i++) {
		const struct jnode *m = v[i].meta, *live = jget(m, "live");
		const struct jnode *cul = jget(jget(m, "diagnosis"), "culprit");
		char when[32] = "?", dur[32] = "?", culprit[160];
		double pid = 0, tid = 0, ms, real;

		if (jnum(live, "began_real_ns", &real)) {
			time_t t = (time_t)(real / 1e9);
			struct tm tm;
			localtime_r(&t, &tm);
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		}
		jnum(m, "pid", &pid);
		jnum(m, "tid", &tid);
		if (jnum(live, "duration_ms", &ms))
			snprintf(dur, sizeof(dur), "%.1f s", ms / 1e3);
		else if (jnum(live, "threshold_ms", &ms))
			snprintf(dur, sizeof(dur), "ongoing");
		if (cul && cul->type == J_OBJ) {
			double cp = 0, ct = 0;
			jnum(cul, "pid", &cp);
			jnum(cul, "tid", &ct);
			snprintf(culprit, sizeof(culprit), "culprit %s %.0f/%.0f (%s)",
				 jstr(cul, "comm") ? msg_tstr(jstr(cul, "comm")) : "?", cp, ct,
				 jstr(cul, "kind") ? jstr(cul, "kind") : "?");
		} else if (m && jstr(m, "diagnose_error")) {
			snprintf(culprit, sizeof(culprit), "no diagnosis: %.120s",
				 msg_tstr(jstr(m, "diagnose_error")));
		} else if (m) {
			snprintf(culprit, sizeof(culprit), "no culprit named");
		} else {
			snprintf(culprit, sizeof(culprit), "%.150s", v[i].why);
		}
		printf("%s  %-15s %7.0f/%-7.0f %-8s %-9s %s\n    %s/%s\n", when,
		       m && jstr(m, "comm") ? msg_tstr(jstr(m, "comm")) : "?", pid, tid,
		       m ? (kind_of(m) ? msg_tstr(kind_of(m)) : "?") : "?", dur, culprit,
		       msg_tstr(dir), msg_tstr(v[i].f->name));
		/* the page argusd wrote with the diagnosis (argus report) */
		if (m && jstr(m, "report"))
			printf("    %s/%s\n", msg_tstr(dir), msg_tstr(jstr(m, "report")));
	}
}

static void print_json(const char *dir, struct saved *v, size_t n)
{
	printf("{\"dir\":");
	json_out_str(dir);
	printf(",\"snapshots\":[");
	for (size_t i = 0; i < n; i++) {
		const struct jnode *m = v[i].meta, *live = jget(m, "live");
		const struct jnode *d = jget(m, "diagnosis"), *cul = jget(d, "culprit");
		char path[4400];
		double x;

		snprintf(path, sizeof(path), "%s/%s", dir, v[i].f->name);
		printf("%s{\"file\":", i ? "," : "");
		json_out_str(path);
		printf(",\"bytes\":%llu", (unsigned long long)v[i].f->bytes);
		if (!m) {
			printf(",\"error\":");
			json_out_str(v[i].why);
			printf("}");
			continue;
		}
		printf(",\"comm\":");
		json_out_str(jstr(m, "comm"));
		printf(",\"pid\":%.0f", jnum(m, "pid", &x) ? x : 0);
		printf(",\"tid\":%.0f", jnum(m, "tid", &x) ? x : 0);
		printf(",\"began\":");
		if (jstr(live, "began"))
			json_out_str(jstr(live, "began"));
		else
			printf("null");
		if (jnum(live, "start_ns", &x))
			printf(",\"start_ns\":%.0f", x);
		if (jnum(live, "duration_ms", &x))
			printf(",\"duration_ms\":%.1f,\"ongoing\":false", x);
		else
			printf(",\"duration_ms\":null,\"ongoing\":true");
		printf(",\"kind\":");
		if (kind_of(m))
			json_out_str(kind_of(m));
		else
			printf("null");
		printf(",\"live_kind\":");
		if (jstr(live, "kind"))
			json_out_str(jstr(live, "kind"));
		else
			printf("null");
		printf(",\"culprit\":");
		if (cul && cul->type == J_OBJ) {
			printf("{\"pid\":%.0f", jnum(cul, "pid", &x) ? x : 0);
			printf(",\"tid\":%.0f,\"comm\":", jnum(cul, "tid", &x) ? x : 0);
			json_out_str(jstr(cul, "comm"));
			printf(",\"process\":");
			json_out_str(jstr(cul, "process"));
			printf(",\"kind\":");
			json_out_str(jstr(cul, "kind"));
			printf("}");
		} else {
			printf("null");
		}
		printf(",\"diagnosed\":%s", d && d->type == J_OBJ ? "true" : "false");
		if (jstr(m, "diagnose_error")) {
			printf(",\"diagnose_error\":");
			json_out_str(jstr(m, "diagnose_error"));
		}
		printf("}");
	}
	printf("]}\n");
}

static const struct argus_usage saved_usage = {
	.cmd = "hangs",
	.synopsis = "argus hangs --saved [--hang-dir D] [--json]\n",
	.about =
	"  Lists the hang snapshots argusd kept by itself (argus start --watch,\n"
	"  interactive processes), newest first: when, process, pid/tid, duration,\n"
	"  kind and the culprit of their diagnosis.\n"
	"  `argus diagnose SNAPSHOT --pid PID` opens any of them.\n",
};

int hangs_saved_cmd(int argc, char **argv)
{
	char dir[4096] = "", resp[8192];
	struct argus_hang_file *files = NULL;
	struct saved *v;
	bool json = false, saved;
	const char *hang_dir = NULL;
	size_t n = 0;
	int e;
	const struct argus_opt opts[] = {
		OPT_BOOL(0, "saved", &saved, "list the snapshots (this form of argus hangs)"),
		OPT_STRING(0, "hang-dir", &hang_dir, "D",
			   "the snapshots' directory (default: the running collector's,\n"
			   "else " ARGUS_DEFAULT_HANG_DIR ")"),
		OPT_BOOL(0, "json", &json, "as JSON"),
		OPT_END(),
	};

	if ((e = argus_opts_parse(&saved_usage, opts, argc, argv, 0)) < 0)
		return argus_opts_exit(e);
	if (e)
		return msg_usage_error("hangs", "--saved lists the kept snapshots: unexpected '%s'"
				       " (it takes only --hang-dir D and --json)", msg_tstr(argv[0]));
	if (hang_dir)
		snprintf(dir, sizeof(dir), "%s", hang_dir);
	if (!dir[0]) {
		char sock[256];
		const char *p;

		/* the running collector's, quietly: none running is fine */
		argus_control_path(sock, sizeof(sock));
		if (argus_control__request(sock, "status", resp, sizeof(resp), 2000) == 0 &&
		    (p = strstr(resp, "hang_dir=")))
			sscanf(p + 9, "%4095[^\n]", dir);
		if (!dir[0])
			snprintf(dir, sizeof(dir), "%s", ARGUS_DEFAULT_HANG_DIR);
	}
	e = argus_hang_dir__list(dir, &files, &n);
	if (e == -ENOENT)
		return msg_error("hangs", "no hang snapshots: %s does not exist (argusd keeps them there"
				 " once it saw a hang of a watched process)", dir);
	if (e)
		return msg_error("hangs", "cannot list %s: %s", dir, strerror(-e));
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		free(files);
		return msg_error("hangs", "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		v[i].f = &files[i];
		v[i].meta = read_meta(dir, &files[i], v[i].why, sizeof(v[i].why));
	}
	if (json)
		print_json(dir, v, n);
	else
		print_text(dir, v, n);
	for (size_t i = 0; i < n; i++)
		jfree(v[i].meta);
	free(v);
	free(files);
	return 0;
}
