/* work_api.c - e2e app (tests/e2e/interpose_work_api.sh): a program's own
 * queue told to Argus with the argus_work_* API (interposer/argus_work.h),
 * linked with -largus-interpose (no LD_PRELOAD).
 *
 *   main    enqueues NJOBS jobs (argus_work_enqueue, then onto a
 *           mutex + condvar queue), marks a boundary, waits for all
 *   worker  takes the jobs one after the other without sleeping between
 *           them when they are queued already: argus_work_begin, a little
 *           work, argus_work_end
 *   both stay 300 ms after the last job: argusd validates a record's
 *   thread against the live process, so records of threads that exited
 *   before it read them are refused (bad_tid)
 *
 * Ground truth on stdout, KEY=VALUE: PID MAIN_TID WORKER_TID NJOBS
 * JOB0..JOB<n-1> (hex addresses) BOUNDARY_TAG (hex) DONE
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "argus_work.h"

#define NJOBS 8

struct job {
	int n;
	int result;
};

static struct job jobs[NJOBS];
static struct job *queue[NJOBS];
static int qhead, qtail, done, quit;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER, finished = PTHREAD_COND_INITIALIZER;
static volatile pid_t worker_tid;
static const char boundary_tag[] = "work_api: all queued";

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = (pid_t)syscall(SYS_gettid);
	for (int k = 0; k < NJOBS; k++) {
		struct job *j;

		pthread_mutex_lock(&mu);
		while (qhead == qtail)
			pthread_cond_wait(&more, &mu);
		j = queue[qhead++];
		pthread_mutex_unlock(&mu);
		argus_work_begin(j);
		for (int i = 0; i < 100000 * (j->n + 1); i++)
			j->result += i & 1;
		argus_work_end(j);
		pthread_mutex_lock(&mu);
		done++;
		pthread_cond_signal(&finished);
		pthread_mutex_unlock(&mu);
	}
	/* alive until argusd has read our records: it checks a record's tid
	 * against the live process (docs/interposer.md, Security model) */
	pthread_mutex_lock(&mu);
	while (!quit)
		pthread_cond_wait(&more, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL)) {
		fprintf(stderr, "work_api: pthread_create failed\n");
		return 1;
	}
	usleep(50000);
	for (int k = 0; k < NJOBS; k++) {
		jobs[k].n = k;
		argus_work_enqueue(&jobs[k]);
		pthread_mutex_lock(&mu);
		queue[qtail++] = &jobs[k];
		pthread_cond_signal(&more);
		pthread_mutex_unlock(&mu);
	}
	argus_work_boundary(boundary_tag);
	pthread_mutex_lock(&mu);
	while (done < NJOBS)
		pthread_cond_wait(&finished, &mu);
	pthread_mutex_unlock(&mu);
	usleep(300000);
	pthread_mutex_lock(&mu);
	quit = 1;
	pthread_cond_signal(&more);
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	printf("PID=%d\nMAIN_TID=%d\nWORKER_TID=%d\nNJOBS=%d\n", (int)getpid(),
	       (int)syscall(SYS_gettid), (int)worker_tid, NJOBS);
	for (int k = 0; k < NJOBS; k++)
		printf("JOB%d=%p\n", k, (void *)&jobs[k]);
	printf("BOUNDARY_TAG=%p\nDONE=%d\n", (void *)boundary_tag, done);
	return 0;
}
