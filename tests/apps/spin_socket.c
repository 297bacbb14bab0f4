/* spin_socket.c - a yield spin whose flag's writer is in another process
 * (issue 13 §8): the main thread spins with sched_yield() on state.done,
 * a field of a global struct; a "cfg_client" thread sets it when a byte
 * arrives on a unix socket from the "cfg_server" process, which sends it
 * after SECONDS.
 *
 * usage: spin_socket [SECONDS]   (default 20)
 * Ground truth on stdout, KEY=VALUE, printed before the spin starts:
 *   SPIN_PID SPIN_TID WRITER_PID (cfg_server) CLIENT_TID
 *   FLAG_ADDR (hex) FLAG_SIZE=4 FLAG_SYMBOL=state FLAG_SYMBOL_OFFSET=8
 *   SPIN_FUNCTION=wait_server SPIN_FUNCTION_ADDR   READY=1 (last)
 */
#include <sched.h>
#include <stddef.h>

#include "case_common.h"

static struct {
	int generation;
	int requests;
	int done;          /* the flag, at offset 8 */
} state;

static int sv[2];      /* [0] here, [1] cfg_server */
static int seconds = 20;
static pid_t client_tid;

static int server_main(void *arg)
{
	(void)arg;
	keep_fds(sv[1]);
	sleep_ms(seconds * 1000L);
	xwrite(sv[1], "!", 1);
	return 0;
}

static void *client(void *arg)
{
	char c;

	(void)arg;
	name_thread("cfg_client");
	__atomic_store_n(&client_tid, my_tid(), __ATOMIC_RELEASE);
	if (xread(sv[0], &c, 1) == 1)
		__atomic_store_n(&state.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

CASE_FN long wait_server(void)
{
	long spins = 0;

	while (!__atomic_load_n(&state.done, __ATOMIC_ACQUIRE)) {
		sched_yield();
		spins++;
	}
	return spins;
}

int main(int argc, char **argv)
{
	pthread_t t;
	pid_t server;

	if (argc > 2 || (argc == 2 && (seconds = atoi(argv[1])) <= 0)) {
		fprintf(stderr, "usage: spin_socket [SECONDS]\n");
		return 2;
	}
	become("spin_socket");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die_sys("socketpair");
	server = spawn("cfg_server", server_main, NULL);
	close(sv[1]);
	if (pthread_create(&t, NULL, client, NULL))
		die("pthread_create failed");
	while (!__atomic_load_n(&client_tid, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	gt("SPIN_PID=%d", getpid());
	gt("SPIN_TID=%d", my_tid());
	gt("WRITER_PID=%d", server);
	gt("CLIENT_TID=%d", client_tid);
	gt("FLAG_ADDR=%p", (void *)&state.done);
	gt("FLAG_SIZE=%zu", sizeof state.done);
	gt("FLAG_SYMBOL=state");
	gt("FLAG_SYMBOL_OFFSET=%zu", offsetof(__typeof__(state), done));
	gt("SPIN_FUNCTION=wait_server");
	gt("SPIN_FUNCTION_ADDR=%p", (void *)wait_server);
	gt("READY=1");
	wait_server();
	pthread_join(t, NULL);
	return reap(server, "cfg_server");
}
