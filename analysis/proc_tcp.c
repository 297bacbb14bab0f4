/* proc_tcp.c - the other end of a loopback TCP connection, on the
 * running system: /proc/net/tcp and /proc/net/tcp6.  For a wait still
 * open at a live snapshot (`diagnose --live`, the lldb plugin): a client
 * blocked in recv() on a local server waits for whoever holds the
 * server's end.
 *
 * The trace names a TCP socket by its two ends, packed as
 * kernel-patch/argus.bpf.c's resolve_fd() does: (IPv4 address in host
 * order) << 16 | port; for an IPv6 socket the address is its last 32
 * bits (::1 is 0.0.0.1, ::ffff:127.0.0.1 is 127.0.0.1).  The other end
 * is the socket whose local end is our remote one and whose remote end
 * is our local one.
 *
 * /proc/net/tcp, one socket a line (net/ipv4/tcp_ipv4.c, get_tcp4_sock):
 *     sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
 *      0: 0100007F:1F90 0100007F:A2C4 01 00000000:00000000 00:00000000 00000000     0        0 51234 1 ...
 * An address is the __be32 printed with %08X as a native u32 (on x86
 * 127.0.0.1 reads 0100007F), the port is in host order; st 01 is
 * ESTABLISHED, 0A LISTEN.  /proc/net/tcp6 prints the four 32-bit words
 * of the in6_addr the same way (32 hex digits).  A connection the server
 * has not accepted yet is there with inode 0 (no struct socket yet):
 * then the socket listening on its port is the one whose holder will
 * answer (diag_tcp_end.listener).
 *
 * Only loopback connections are looked up: both ends on 127.0.0.0/8, ::1
 * or ::ffff:127.0.0.0/104.  A connection to another host has its other
 * end there, and one to this host's own external address is left out
 * (the trace's 32 bits of an IPv6 address cannot tell it from another
 * host's).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_events.h"
#include "diag_front.h"

#define TCP_LISTEN 0x0a

bool diag_front_tcp_loopback(uint64_t end)
{
	uint32_t ip = (uint32_t)(end >> 16);

	return (ip >> 24) == 127 || ip == 1;
}

/* One address of a table: 8 hex digits (tcp) or 32 (tcp6).  *ip is what
 * the trace keeps of it (host order, IPv6: the last word), *any the
 * wildcard address, *loop a loopback one (for IPv4 decided by the
 * caller from *ip).  -1 when it does not parse. */
static int parse_addr(const char *hex, uint32_t *ip, bool *any, bool *loop)
{
	uint32_t w[4];
	size_t len = strlen(hex);

	if (len != 8 && len != 32)
		return -1;
	for (size_t i = 0; i < len / 8; i++) {
		char word[9];

		memcpy(word, hex + 8 * i, 8);
		word[8] = 0;
		w[i] = (uint32_t)strtoul(word, NULL, 16);
	}
	if (len == 8) {
		*ip = ntohl(w[0]);
		*any = *ip == 0;
		*loop = (*ip >> 24) == 127;
		return 0;
	}
	*ip = ntohl(w[3]);
	*any = !w[0] && !w[1] && !w[2] && !w[3];
	*loop = !w[0] && !w[1] &&
		((!w[2] && *ip == 1) || (ntohl(w[2]) == 0xffff && (*ip >> 24) == 127));
	return 0;
}

int diag_front_tcp_find(FILE *f, uint64_t local, uint64_t remote, struct diag_tcp_end *out)
{
	char line[512];
	uint64_t listen_ino = 0;
	uint32_t rip = (uint32_t)(remote >> 16);
	unsigned rport = (unsigned)(remote & 0xffff);

	if (!f || !out)
		return -EINVAL;
	while (fgets(line, sizeof(line), f)) {
		char la[40], ra[40];
		unsigned lport, port2, st;
		uint64_t ino;
		uint32_t lip, ip2;
		bool lany, lloop, rany, rloop;

		/* the header ("  sl  local_address ...") does not parse */
		if (sscanf(line, " %*u: %39[0-9A-Fa-f]:%x %39[0-9A-Fa-f]:%x %x %*s %*s %*s %*u %*u %" SCNu64,
			   la, &lport, ra, &port2, &st, &ino) != 6 ||
		    parse_addr(la, &lip, &lany, &lloop) || parse_addr(ra, &ip2, &rany, &rloop))
			continue;
		if (!ino)
			continue;       /* not accepted yet, TIME_WAIT: no socket */
		if (st == TCP_LISTEN) {
			/* the listener on our remote port: bound to its address
			 * or to the wildcard */
			if (lport == rport && (lany || (lloop && lip == rip)) && !listen_ino)
				listen_ino = ino;
			continue;
		}
		if (!lloop || !rloop)
			continue;
		if (((uint64_t)lip << 16 | lport) == remote && ((uint64_t)ip2 << 16 | port2) == local) {
			out->inode = ino;
			out->listener = false;
			return 0;
		}
	}
	if (!listen_ino)
		return -ENOENT;
	out->inode = listen_ino;
	out->listener = true;
	return 0;
}

uint32_t diag_front_tcp_peer_holders(uint64_t local, uint64_t remote, uint32_t *pids, uint32_t max,
				   bool *listener)
{
	static const char *const tables[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	struct diag_tcp_end best = { 0 };
	char link[DIAG_FD_LINK_LEN];

	*listener = false;
	if (!max || !diag_front_tcp_loopback(local) || !diag_front_tcp_loopback(remote))
		return 0;
	/* the other end itself in either table before a listener in either */
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		struct diag_tcp_end e;
		FILE *f = fopen(tables[i], "re");
		int rc = f ? diag_front_tcp_find(f, local, remote, &e) : -ENOENT;

		if (f)
			fclose(f);
		if (rc)
			continue;
		if (!e.listener) {
			best = e;
			break;
		}
		if (!best.inode)
			best = e;
	}
	if (!best.inode)
		return 0;
	*listener = best.listener;
	diag_front_fd_link(AE_OBJ_TCP, best.inode, link, sizeof(link));
	return diag_front_fd_holders(link, pids, max);
}
