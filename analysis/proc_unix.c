/* proc_unix.c - the listener behind a unix connection nobody has accepted
 * yet, on the running system (NETLINK_SOCK_DIAG, through libmnl).
 *
 * A client that connects and sends at once (xprop to an X server that is
 * stopped or busy) waits on a connection the server has not accept()ed:
 * the server's end is an embryo socket in the listener's queue, with no
 * inode and in no process's fd table, so the trace records the client's
 * peer as 0 and /proc/PID/fd finds nobody.  Whoever will answer holds the
 * listening socket.  The kernel lists, per listener, the clients whose
 * connections wait in its queue (UDIAG_SHOW_ICONS: the inode of each
 * embryo's peer, i.e. of the client's own socket; net/unix/diag.c,
 * sk_diag_dump_icons), so the listener is found by the client's inode
 * alone, with no path to match (abstract and filesystem names alike).
 *
 * Everything read here is the kernel's answer about this network
 * namespace; a message is used only when every length in it checks out
 * (mnl_nlmsg_ok, mnl_attr_validate).
 */
#include <errno.h>
#include <inttypes.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "diag_front.h"

struct icons_ctx {
	uint32_t client;        /* the waiting client's socket inode */
	uint32_t listener;      /* found: the listener's inode, 0 none */
};

static int icons_attr(const struct nlattr *a, void *data)
{
	const struct unix_diag_msg *m = ((void **)data)[0];
	struct icons_ctx *c = ((void **)data)[1];
	const uint32_t *ino;
	size_t n;

	if (mnl_attr_get_type(a) != UNIX_DIAG_ICONS)
		return MNL_CB_OK;
	if (mnl_attr_get_payload_len(a) % sizeof(uint32_t))
		return MNL_CB_OK;       /* malformed: not ours to trust */
	ino = mnl_attr_get_payload(a);
	n = mnl_attr_get_payload_len(a) / sizeof(uint32_t);
	for (size_t i = 0; i < n && !c->listener; i++)
		if (ino[i] == c->client)
			c->listener = m->udiag_ino;
	return MNL_CB_OK;
}

static int icons_msg(const struct nlmsghdr *nlh, void *data)
{
	const struct unix_diag_msg *m;
	void *pair[2];

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*m))
		return MNL_CB_OK;
	m = mnl_nlmsg_get_payload(nlh);
	pair[0] = (void *)m;
	pair[1] = data;
	mnl_attr_parse(nlh, sizeof(*m), icons_attr, pair);
	return MNL_CB_OK;
}

int diag_front_unix_listener(uint32_t client_ino, uint32_t *listener_ino)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct icons_ctx c = { .client = client_ino };
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct unix_diag_req *req;
	unsigned seq = (unsigned)time(NULL), port;
	int rc = 0;
	ssize_t len;

	if (!client_ino)
		return -EINVAL;
	if (!(nl = mnl_socket_open(NETLINK_SOCK_DIAG)))
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		goto out;
	}
	port = mnl_socket_get_portid(nl);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = AF_UNIX;
	req->udiag_states = 1u << TCP_LISTEN;   /* listeners only */
	req->udiag_show = UDIAG_SHOW_ICONS;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		rc = -errno;
		goto out;
	}
	/* read the whole dump (MNL_CB_STOP at NLMSG_DONE) even once found:
	 * the socket is closed right after, so stopping early is fine too */
	while ((len = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		rc = mnl_cb_run(buf, (size_t)len, seq, port, icons_msg, &c);
		if (rc <= MNL_CB_STOP)
			break;
	}
	rc = len < 0 ? -errno : rc < 0 ? -errno : 0;
	if (!rc && !c.listener)
		rc = -ENOENT;
	if (!rc)
		*listener_ino = c.listener;
out:
	mnl_socket_close(nl);
	return rc;
}
