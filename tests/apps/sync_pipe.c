/* sync_pipe.c - e2e app (tests/e2e/interpose_sync.sh): the UI (main)
 * thread waits on an rwlock, a condition variable or a semaphore, and the
 * thread it waits for is itself blocked reading a pipe that a separate
 * process (the writer) fills late.
 *
 * usage: sync_pipe MODE [DELAY_MS (3000)]
 *   rwlock  a worker write-locks `rw`, reads the pipe, unlocks; the UI,
 *           after a few uncontended rdlock rounds, rdlocks `rw` while the
 *           worker holds it: blocked until the byte arrives;
 *   cond    a signaller reads one byte per round from the pipe, then
 *           locks `mu`, bumps `ready`, signals `cv`; the UI waits for each
 *           round with pthread_cond_wait.  The writer writes 5 bytes 20 ms
 *           apart (normal rounds), then the last one after DELAY_MS (the
 *           hang);
 *   sem     a poster reads the pipe, then sem_post(&sem); the UI sem_waits
 *           (5 fast rounds, then the slow one);
 *   compat  cond, but the UI and the signaller call the old-ABI
 *           pthread_cond_wait/signal@GLIBC_2.2.5 (glibc's compat code,
 *           which the interposer must leave alone) on `cv_old`, while the
 *           signaller also signals `cv` (2.3.2) on a side round nobody
 *           waits for.
 *
 * Ground truth, KEY=VALUE on stdout: at the start (flushed, so a test can
 * read it while the UI still waits) PID UI_TID PEER_TID WRITER_PID
 * OBJ_ADDR (hex: the rwlock, condvar or semaphore) MUTEX_ADDR (cond);
 * at the end WAITED_MS (the slow wait) and ROUNDS (waits the UI did).
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FAST_ROUNDS 5

/* the old (pre-NPTL layout) condvar functions, as a binary linked against
 * glibc 2.2.5 would call them */
extern int old_cond_wait(pthread_cond_t *, pthread_mutex_t *);
extern int old_cond_signal(pthread_cond_t *);
__asm__(".symver old_cond_wait, pthread_cond_wait@GLIBC_2.2.5");
__asm__(".symver old_cond_signal, pthread_cond_signal@GLIBC_2.2.5");

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t cv_old;   /* zeroes: the old ABI's initializer */
static sem_t sem;
static int pfd[2], mode_compat;
static volatile int holding, ready, go;
static volatile pid_t peer_tid;

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void nap_ms(long ms)
{
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&d, NULL);
}

static int get_byte(void)
{
	char c;

	if (read(pfd[0], &c, 1) != 1) {
		perror("sync_pipe: read");
		return -1;
	}
	return 0;
}

/* A peer's last record is often its only one, written just before it
 * returns: argusd accepts a tid it can still see in /proc/PID/task when
 * it drains (every ~50 ms), so a peer stays 150 ms before exiting
 * (docs/interposer.md, "Security model": a thread that exits before
 * argusd first saw a record of it has its records rejected). */
#define LINGER_MS 150

static void *rw_worker(void *arg)
{
	(void)arg;
	peer_tid = my_tid();
	while (!go)             /* after the UI's uncontended rounds */
		nap_ms(1);
	pthread_rwlock_wrlock(&rw);
	holding = 1;
	get_byte();
	pthread_rwlock_unlock(&rw);
	nap_ms(LINGER_MS);
	return NULL;
}

static void *signaller(void *arg)
{
	(void)arg;
	peer_tid = my_tid();
	for (int i = 0; i <= FAST_ROUNDS; i++) {
		if (get_byte())
			break;
		pthread_mutex_lock(&mu);
		ready++;
		if (mode_compat) {
			old_cond_signal(&cv_old);
			pthread_cond_signal(&cv);       /* nobody waits: not recorded */
		} else {
			pthread_cond_signal(&cv);
		}
		pthread_mutex_unlock(&mu);
	}
	nap_ms(LINGER_MS);
	return NULL;
}

static void *poster(void *arg)
{
	(void)arg;
	peer_tid = my_tid();
	for (int i = 0; i <= FAST_ROUNDS; i++) {
		if (get_byte())
			break;
		sem_post(&sem);
	}
	nap_ms(LINGER_MS);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long delay_ms = argc > 2 ? atol(argv[2]) : 3000;
	int rwl = !strcmp(mode, "rwlock"), cond = !strcmp(mode, "cond"),
	    sm = !strcmp(mode, "sem"), rounds = 0, st;
	double t0 = 0, waited = 0;
	void *obj;
	pthread_t w;
	pid_t writer;

	mode_compat = !strcmp(mode, "compat");
	if ((!rwl && !cond && !sm && !mode_compat) || delay_ms <= 0 || pipe(pfd) ||
	    sem_init(&sem, 0, 0)) {
		fprintf(stderr, "usage: sync_pipe rwlock|cond|sem|compat [DELAY_MS]\n");
		return 2;
	}
	obj = rwl ? (void *)&rw : sm ? (void *)&sem : mode_compat ? (void *)&cv_old : (void *)&cv;
	writer = fork();
	if (writer < 0) {
		perror("sync_pipe: fork");
		return 1;
	}
	if (writer == 0) {
		close(pfd[0]);
		for (int i = 0; !rwl && i < FAST_ROUNDS; i++) {
			nap_ms(20);
			if (write(pfd[1], "x", 1) != 1)
				_exit(1);
		}
		nap_ms(delay_ms);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (pthread_create(&w, NULL, rwl ? rw_worker : sm ? poster : signaller, NULL)) {
		fprintf(stderr, "sync_pipe: pthread_create failed\n");
		return 1;
	}
	while (!peer_tid)
		nap_ms(1);
	printf("PID=%d\nUI_TID=%d\nPEER_TID=%d\nWRITER_PID=%d\nOBJ_ADDR=%#lx\nMUTEX_ADDR=%#lx\n",
	       getpid(), my_tid(), peer_tid, writer, (unsigned long)obj, (unsigned long)&mu);
	fflush(stdout);
	if (rwl) {
		/* normal rounds: no wait */
		for (int i = 0; i < FAST_ROUNDS; i++) {
			pthread_rwlock_rdlock(&rw);
			pthread_rwlock_unlock(&rw);
		}
		go = 1;
		while (!holding)
			nap_ms(1);
		t0 = mono_ms();
		pthread_rwlock_rdlock(&rw);     /* the hang: the worker writes */
		waited = mono_ms() - t0;
		pthread_rwlock_unlock(&rw);
		rounds = 1;
	} else if (sm) {
		for (int i = 0; i <= FAST_ROUNDS; i++) {
			t0 = mono_ms();
			while (sem_wait(&sem) && errno == EINTR)
				;
			waited = mono_ms() - t0;
			rounds++;
		}
	} else {
		pthread_mutex_lock(&mu);
		for (int i = 1; i <= FAST_ROUNDS + 1; i++) {
			t0 = mono_ms();
			while (ready < i) {
				if (mode_compat)
					old_cond_wait(&cv_old, &mu);
				else
					pthread_cond_wait(&cv, &mu);
				rounds++;
			}
			waited = mono_ms() - t0;
		}
		pthread_mutex_unlock(&mu);
	}
	pthread_join(w, NULL);
	if (waitpid(writer, &st, 0) != writer || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "sync_pipe: the writer failed\n");
		return 1;
	}
	printf("WAITED_MS=%.0f\nROUNDS=%d\n", waited, rounds);
	return 0;
}
