/*
 * Implementation of peer_uid.h: one exact lookup (no dump) in the kernel's
 * TCP socket table per question.  The peer's socket is named from its own
 * side: its source is the connection's remote end, its destination ours.
 * A client of an IPv6 listener that connected to an IPv4 address shows as
 * ::ffff:a.b.c.d here but owns an AF_INET socket, so that family is asked
 * first.  Unprivileged: ss(8) reads the same table as any user.
 */
#include "peer_uid.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "log.h"

/* The sockets of one connection as the peer's side names them. */
struct tcp_tuple {
	int family;                  /* AF_INET or AF_INET6 */
	uint32_t peer[4], ours[4];   /* addresses, network order; IPv4 in [0] */
	uint16_t peer_port, our_port; /* network order */
};

/* Fills t from an address pair; false for a family this does not know. */
static bool tuple_of(const struct sockaddr_storage *peer, const struct sockaddr_storage *ours, bool as_v4,
		     struct tcp_tuple *t)
{
	memset(t, 0, sizeof(*t));
	if (peer->ss_family == AF_INET && ours->ss_family == AF_INET) {
		const struct sockaddr_in *p = (const void *)peer, *o = (const void *)ours;

		t->family = AF_INET;
		t->peer[0] = p->sin_addr.s_addr;
		t->ours[0] = o->sin_addr.s_addr;
		t->peer_port = p->sin_port;
		t->our_port = o->sin_port;
		return true;
	}
	if (peer->ss_family == AF_INET6 && ours->ss_family == AF_INET6) {
		const struct sockaddr_in6 *p = (const void *)peer, *o = (const void *)ours;

		t->peer_port = p->sin6_port;
		t->our_port = o->sin6_port;
		if (as_v4) {
			if (!IN6_IS_ADDR_V4MAPPED(&p->sin6_addr) || !IN6_IS_ADDR_V4MAPPED(&o->sin6_addr))
				return false;
			t->family = AF_INET;
			memcpy(&t->peer[0], &p->sin6_addr.s6_addr[12], 4);
			memcpy(&t->ours[0], &o->sin6_addr.s6_addr[12], 4);
			return true;
		}
		t->family = AF_INET6;
		memcpy(t->peer, &p->sin6_addr, 16);
		memcpy(t->ours, &o->sin6_addr, 16);
		return true;
	}
	return false;
}

/* Asks the kernel for the socket t names: 0 with *uid, -1 when it has none (or cannot say). */
static int ask(int nl, const struct tcp_tuple *t, uid_t *uid)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 req;
	} q;
	union {
		struct nlmsghdr nh;
		char buf[8192];
	} a;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	const struct nlmsghdr *h;
	const struct inet_diag_msg *m;
	ssize_t n;
	int len;

	memset(&q, 0, sizeof(q));
	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST;
	q.nh.nlmsg_seq = 1;
	q.req.sdiag_family = (uint8_t)t->family;
	q.req.sdiag_protocol = IPPROTO_TCP;
	q.req.idiag_states = ~0U;
	q.req.id.idiag_sport = t->peer_port;
	q.req.id.idiag_dport = t->our_port;
	memcpy(q.req.id.idiag_src, t->peer, sizeof(t->peer));
	memcpy(q.req.id.idiag_dst, t->ours, sizeof(t->ours));
	q.req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	q.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (sendto(nl, &q, sizeof(q), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -1;
	n = recv(nl, &a, sizeof(a), 0);
	if (n < 0)
		return -1;
	len = (int)n;
	for (h = &a.nh; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
			continue;   /* NLMSG_ERROR: no such socket */
		m = NLMSG_DATA(h);
		/* The lookup may fall back to a listener: only the connection itself answers. */
		if (m->id.idiag_sport != t->peer_port || m->id.idiag_dport != t->our_port)
			continue;
		*uid = (uid_t)m->idiag_uid;
		return 0;
	}
	return -1;
}

int peer_uid_tcp(int fd, uid_t *uid)
{
	struct sockaddr_storage peer, ours;
	socklen_t lp = sizeof(peer), lo = sizeof(ours);
	struct timeval tv = {1, 0};   /* the kernel answers at once; never hang a worker */
	struct tcp_tuple t;
	int nl, r = -1;

	if (getpeername(fd, (struct sockaddr *)&peer, &lp) < 0 || getsockname(fd, (struct sockaddr *)&ours, &lo) < 0) {
		log_debug("%s: %s", __func__, strerror(errno));
		return -1;
	}
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0) {
		log_debug("%s: netlink: %s", __func__, strerror(errno));
		return -1;
	}
	setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (tuple_of(&peer, &ours, true, &t))
		r = ask(nl, &t, uid);
	if (r < 0 && tuple_of(&peer, &ours, false, &t))
		r = ask(nl, &t, uid);
	if (r < 0)
		log_debug("%s: the kernel names no socket for this connection's peer", __func__);
	close(nl);
	return r;
}
