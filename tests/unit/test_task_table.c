/* The collector's thread table (collector/task_table.c): lookups, and the
 * rule that names a thread after the newest record, not the last drained
 * (a parent's fork record can be drained after its child's exec). */
#include <string.h>

#include "check.h"
#include "task_table.h"

/* A fresh table holding one entry for tid (NULL, and a failed check, if
 * it could not be made). */
static struct task_entry *one_entry(struct task_table *t, uint32_t tid)
{
	struct task_entry *e;

	CHECK_EQ(task_table__init(t), 0);
	e = task_table__get_or_add(t, tid);
	CHECK(e != NULL);
	return e;
}

static void test_a_late_fork_record_does_not_undo_the_exec(void)
{
	struct task_table t;
	struct task_entry *e;

	e = one_entry(&t, 4242);
	if (!e)
		return;
	/* drain order: the child's exec (t=200) first, then its parent's
	 * fork (t=100), which names the child after the parent */
	CHECK(task_table__name(e, "flock", 200));
	CHECK(!task_table__name(e, "bash", 100));
	CHECK(strcmp(e->comm, "flock") == 0);
	CHECK_EQ(e->named_ts, 200);
	/* a newer rename still applies, and one of the same time too */
	CHECK(task_table__name(e, "flock-worker", 300));
	CHECK(strcmp(e->comm, "flock-worker") == 0);
	CHECK(task_table__name(e, "again", 300));
	CHECK(strcmp(e->comm, "again") == 0);
	/* the entry is the same one a later lookup finds */
	CHECK(task_table__find(&t, 4242) == e);
	task_table__free(&t);
}

static void test_an_entry_from_proc_takes_any_record(void)
{
	struct task_table t;
	struct task_entry *e;

	e = one_entry(&t, 7);
	if (!e)
		return;
	/* seeded, or added by a record without a name: named_ts 0 */
	strcpy(e->comm, "seeded");
	CHECK_EQ(e->named_ts, 0);
	CHECK(task_table__name(e, "first", 1));
	CHECK(strcmp(e->comm, "first") == 0);
	task_table__free(&t);
}

static void test_a_name_is_cut_to_fifteen_bytes_and_empty_is_ignored(void)
{
	struct task_table t;
	struct task_entry *e;
	/* a record's comm is 16 bytes and need not hold a NUL */
	char full[16];

	memset(full, 'x', sizeof(full));
	e = one_entry(&t, 9);
	if (!e)
		return;
	CHECK(task_table__name(e, "kept", 5));
	CHECK(!task_table__name(e, "", 6));
	CHECK(!task_table__name(e, NULL, 7));
	CHECK(strcmp(e->comm, "kept") == 0);
	CHECK(task_table__name(e, full, 8));
	CHECK_EQ(strlen(e->comm), 15);
	CHECK(!task_table__name(NULL, "x", 9));
	task_table__free(&t);
}

int main(void)
{
	RUN(test_a_late_fork_record_does_not_undo_the_exec);
	RUN(test_an_entry_from_proc_takes_any_record);
	RUN(test_a_name_is_cut_to_fifteen_bytes_and_empty_is_ignored);
	return check_report();
}
