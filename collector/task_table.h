/* task_table.h - what the collector knows about every thread: tgid, parent
 * and name, keyed by tid.  Seeded from /proc when collection starts and
 * kept current from fork/exec/rename/switch records, so every chunk can
 * carry a snapshot of the threads it mentions.
 *
 * Open addressing with linear probing; tid 0 marks an empty slot (the idle
 * task is never stored).  Entries are never moved while the table is not
 * growing, so pointers stay valid until the next __get_or_add(). */
#ifndef ARGUS_TASK_TABLE_H
#define ARGUS_TASK_TABLE_H
#include <stdbool.h>
#include <stdint.h>

struct task_entry {
	uint32_t tid;       /* 0 = empty slot */
	uint32_t pid;       /* tgid */
	uint32_t ppid;      /* parent tgid, 0 if unknown */
	uint32_t chunk_gen; /* last chunk that referenced it */
	bool exited;        /* saw sched_process_free; dropped at next prune */
	char comm[16];
	uint64_t named_ts;  /* time of the record that gave comm (0: /proc) */
};

struct task_table {
	struct task_entry *slots;
	uint32_t cap;       /* power of two */
	uint32_t used;
};

int task_table__init(struct task_table *t);
void task_table__free(struct task_table *t);
struct task_entry *task_table__find(struct task_table *t, uint32_t tid);
/* Returns the entry, created empty (pid = tid) if new; NULL on ENOMEM. */
struct task_entry *task_table__get_or_add(struct task_table *t, uint32_t tid);
/*
 * Name e after a record of time ts (fork, exec, rename, a switch to it),
 * unless a newer record already named it: returns whether comm was taken.
 * Records are applied in drain order, and each CPU's batch reaches the
 * ring on its own, so a parent's fork record (the child under the
 * parent's name) can come after the child's exec on the other CPU.
 * Applied last, it named a `flock` `bash` in every chunk until the
 * child next ran (e2e_real_flock's culprit, once in a CI run).  comm is at most 16 bytes,
 * NUL-terminated within them or cut there.
 */
bool task_table__name(struct task_entry *e, const char *comm, uint64_t ts);
/* Remove entries marked exited.  Rebuilds the table. */
void task_table__prune(struct task_table *t);
/* Seed from /proc/[pid]/task/[tid]; returns threads found. */
int task_table__scan_proc(struct task_table *t);
#endif
