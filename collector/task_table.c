/* task_table.c - see task_table.h. */
#include "task_table.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t slot_of(const struct task_table *t, uint32_t tid)
{
	return (tid * 2654435761u) & (t->cap - 1);
}

int task_table__init(struct task_table *t)
{
	t->cap = 4096;
	t->used = 0;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	return t->slots ? 0 : -ENOMEM;
}

void task_table__free(struct task_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->used = 0;
}

struct task_entry *task_table__find(struct task_table *t, uint32_t tid)
{
	if (!tid)
		return NULL;
	for (uint32_t i = slot_of(t, tid);; i = (i + 1) & (t->cap - 1)) {
		if (t->slots[i].tid == tid)
			return &t->slots[i];
		if (!t->slots[i].tid)
			return NULL;
	}
}

static int rehash(struct task_table *t, uint32_t cap, bool drop_exited)
{
	struct task_entry *old = t->slots;
	uint32_t oldcap = t->cap;

	t->slots = calloc(cap, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -ENOMEM;
	}
	t->cap = cap;
	t->used = 0;
	for (uint32_t i = 0; i < oldcap; i++) {
		if (!old[i].tid || (drop_exited && old[i].exited))
			continue;
		uint32_t j = slot_of(t, old[i].tid);
		while (t->slots[j].tid)
			j = (j + 1) & (t->cap - 1);
		t->slots[j] = old[i];
		t->used++;
	}
	free(old);
	return 0;
}

struct task_entry *task_table__get_or_add(struct task_table *t, uint32_t tid)
{
	struct task_entry *e;

	if (!tid)
		return NULL;
	e = task_table__find(t, tid);
	if (e)
		return e;
	/* keep the load under 1/2 so probes stay short */
	if ((t->used + 1) * 2 > t->cap && rehash(t, t->cap * 2, false))
		return NULL;
	uint32_t i = slot_of(t, tid);
	while (t->slots[i].tid)
		i = (i + 1) & (t->cap - 1);
	e = &t->slots[i];
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	e->pid = tid;
	t->used++;
	return e;
}

bool task_table__name(struct task_entry *e, const char *comm, uint64_t ts)
{
	size_t n;

	if (!e || !comm || !comm[0] || ts < e->named_ts)
		return false;
	n = strnlen(comm, sizeof(e->comm));
	if (n == sizeof(e->comm))
		n--;
	memcpy(e->comm, comm, n);
	e->comm[n] = 0;
	e->named_ts = ts;
	return true;
}

void task_table__prune(struct task_table *t)
{
	rehash(t, t->cap, true);
}

/* Reads "Tgid:" and "PPid:" from /proc/PID/task/TID/status. */
static void read_status(const char *path, struct task_entry *e)
{
	char line[256];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned v;
		if (sscanf(line, "Tgid: %u", &v) == 1)
			e->pid = v;
		else if (sscanf(line, "PPid: %u", &v) == 1)
			e->ppid = v;
	}
	fclose(f);
}

static void read_comm(const char *path, struct task_entry *e)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return;
	n = fread(e->comm, 1, sizeof(e->comm) - 1, f);
	fclose(f);
	e->comm[n] = 0;
	e->comm[strcspn(e->comm, "\n")] = 0;
}

int task_table__scan_proc(struct task_table *t)
{
	DIR *proc = opendir("/proc");
	struct dirent *pd;
	int found = 0;

	if (!proc)
		return -errno;
	while ((pd = readdir(proc))) {
		char path[300];
		DIR *tasks;
		struct dirent *td;

		if (pd->d_name[0] < '1' || pd->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", pd->d_name);
		tasks = opendir(path);
		if (!tasks)
			continue; /* exited meanwhile */
		while ((td = readdir(tasks))) {
			unsigned long tid = strtoul(td->d_name, NULL, 10);
			struct task_entry *e;

			if (!tid || tid > UINT32_MAX)
				continue;
			e = task_table__get_or_add(t, (uint32_t)tid);
			if (!e)
				break;
			snprintf(path, sizeof(path), "/proc/%s/task/%lu/status", pd->d_name, tid);
			read_status(path, e);
			snprintf(path, sizeof(path), "/proc/%s/task/%lu/comm", pd->d_name, tid);
			read_comm(path, e);
			found++;
		}
		closedir(tasks);
	}
	closedir(proc);
	return found;
}
