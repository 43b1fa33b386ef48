/*
 * Implementation of server.h on libmicrohttpd.  The sockets are created
 * here (so "--listen 127.0.0.1:0" can report the port it got, and the Unix
 * socket can be served by the same code) and handed to one mhd_pool each
 * (MHD daemons fed by one accepting thread: mhd_pool.c says why).
 * Per-request state (the body being received) lives in MHD's req_cls.
 *
 * Limits, and why each sits where it does: MHD closes idle connections
 * (connection_timeout), the pool caps them per listener (max_connections); the
 * accept policy caps connections per remote address, so one host cannot
 * take every slot (loopback and the Unix socket are this node's own jobs and
 * are exempt); a token bucket per client (address, or uid on the Unix
 * socket) bounds mutating requests (429 with Retry-After); and request
 * bodies held in memory at once share one budget (503 with Retry-After), so
 * a thousand slow 8 MiB uploads cannot take gigabytes.
 */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "http.h"
#include "invariant.h"
#include "log.h"
#include "mhd_pool.h"
#include "peer_uid.h"
#include "router.h"
#include "stats.h"

/* Request bodies buffered at once, all connections together: at least this, or 4 * max_body. */
#define SERVER_BODY_BUDGET_MIN (64u * 1024 * 1024)
#define RATE_SLOTS 1024          /* clients tracked by the rate limiter; a power of two */
#define RATE_PROBE 8             /* slots looked at per client before evicting the stalest */
/*
 * MHD's memory pool per connection (its default is 32 KiB): request line,
 * headers, the read buffer and the answer's headers.  Bodies are copied out
 * of upload_data as they arrive, so they need none of it.  Every open
 * connection holds one pool and MHD zeroes it between requests: halving it
 * halves both for a prologue storm (500 connections at once).  The price:
 * requests whose headers pass about 7.5 KB (fat cookies) get 431, as from
 * servers with 8 KB header limits; the default took about 16 KB.
 */
#define SERVER_CONNECTION_POOL (16u * 1024)

struct listener {
	struct server *srv;
	struct mhd_pool *pool;
	int fd;
	bool unix_socket;
	char name[128];            /* for logs */
};

/* Open connections of one remote address. */
struct ip_count {
	int family;                /* AF_INET, AF_INET6; 0: free slot */
	unsigned char addr[16];
	unsigned count;
};

/* A token bucket of one client. */
struct rate_bucket {
	char key[64];              /* the address, or "uid N" on the Unix socket; "" free */
	double tokens;
	double stamp;              /* monotonic seconds of the last refill */
};

struct server {
	struct app *app;
	size_t max_body;
	struct listener listeners[9];
	int nlisteners;
	char *socket_path;         /* to unlink at stop */

	pthread_mutex_t access_lock;  /* guards token and read_access */
	char *token;
	enum read_access read_access;

	_Atomic size_t body_bytes;    /* buffered request bodies, all connections */
	size_t body_budget;

	pthread_mutex_t ip_lock;      /* guards ips */
	struct ip_count *ips;         /* nips slots: enough for every connection */
	size_t nips;
	unsigned per_ip_limit;        /* 0: none */

	pthread_mutex_t rate_lock;    /* guards buckets */
	struct rate_bucket *buckets;  /* RATE_SLOTS; NULL: no rate limit */
	double rate, burst;
};

/* What one request accumulates between MHD's calls. */
struct request_state {
	char *body;
	size_t len, cap;           /* cap bytes are charged to the body budget */
	bool too_large;
	bool over_budget;
	struct timespec start;
};

static double elapsed_s(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* ---- sockets ---- */

/* Splits "host:port" / "[v6]:port" into a socket address. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon;
	size_t hlen;

	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close)
			return -1;
		hlen = (size_t)(close - spec - 1);
		if (hlen >= sizeof(host))
			return -1;
		memcpy(host, spec + 1, hlen);
		colon = close + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon)
			return -1;
		hlen = (size_t)(colon - spec);
		if (hlen >= sizeof(host))
			return -1;
		memcpy(host, spec, hlen);
	}
	host[hlen] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (spec[0] != '[') {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)atoi(colon + 1));
		if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			return -1;
		*len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)atoi(colon + 1));
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return -1;
		*len = sizeof(*in6);
	}
	return 0;
}

static void format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, len, "unix");
	}
}

static int tcp_listen(const char *spec, struct listener *l)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;

	if (parse_listen(spec, &ss, &len) < 0) {
		log_warnx("listen: '%s' is not a numeric ADDR:PORT", spec);
		return -1;
	}
	l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0) {
		log_warn("listen: %s: socket", spec);
		return -1;
	}
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(l->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(l->fd, (struct sockaddr *)&ss, len) < 0 || listen(l->fd, 1024) < 0) {
		log_warn("listen: %s", spec);
		return -1;
	}
	len = sizeof(ss);
	getsockname(l->fd, (struct sockaddr *)&ss, &len);
	format_addr((struct sockaddr *)&ss, l->name, sizeof(l->name));
	return 0;
}

static int unix_listen(const char *path, struct listener *l)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("socket: %s: path too long", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0) {
		log_warn("socket: %s", path);
		return -1;
	}
	/* A stale socket from an earlier run would make bind fail. */
	if (unlink(path) < 0 && errno != ENOENT) {
		log_warn("socket: cannot remove stale %s", path);
		return -1;
	}
	if (bind(l->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(l->fd, 1024) < 0) {
		log_warn("socket: %s", path);
		return -1;
	}
	/* Any local user may connect: ownership is enforced per job with SO_PEERCRED. */
	chmod(path, 0666);
	l->unix_socket = true;
	snprintf(l->name, sizeof(l->name), "unix:%s", path);
	return 0;
}

/* ---- access ---- */

bool server_token_equal(const char *given, const char *secret)
{
	size_t lg = strlen(given), ls = strlen(secret);
	unsigned char diff = (unsigned char)(lg != ls);

	if (ls == 0)
		return false;   /* no token configured: nothing matches */
	/* Always walks the secret's full length, whatever the guess. */
	for (size_t i = 0; i < ls; i++)
		diff |= (unsigned char)(secret[i] ^ (i < lg ? given[i] : 0));
	return diff == 0;
}

bool server_access_check(enum route_access access, const struct http_peer *peer, enum read_access read_access,
			 struct http_response *resp)
{
	bool local = peer->loopback || peer->unix_socket;

	if (access == ACCESS_MUTATE) {
		if (local || peer->token_ok)
			return true;
		http_reply_error(resp, 403, "forbidden",
				 "changes are accepted from this node (loopback or the Unix socket) or with "
				 "the configured bearer token");
		return false;
	}
	/* An unknown setting grants nothing beyond this node: fail closed. */
	if (read_access == READ_ACCESS_ANY || local || (read_access == READ_ACCESS_TOKEN && peer->token_ok))
		return true;
	http_reply_error(resp, 403, "forbidden", "reads are limited to %s clients by read_access",
			 read_access == READ_ACCESS_TOKEN ? "local or token-bearing" : "local");
	return false;
}

/* ---- peers ---- */

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

/* Who is calling; key names the client for the rate limiter (no port: one host, one bucket). */
static void fill_peer(struct listener *l, struct MHD_Connection *conn, struct http_peer *peer, char *key,
		      size_t key_len)
{
	const union MHD_ConnectionInfo *ci;

	memset(peer, 0, sizeof(*peer));
	snprintf(key, key_len, "unknown");
	if (l->unix_socket) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		peer->unix_socket = true;
		snprintf(peer->addr, sizeof(peer->addr), "unix");
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (ci && getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
			peer->has_uid = true;
			peer->uid = cred.uid;
			snprintf(peer->addr, sizeof(peer->addr), "unix:uid=%u", (unsigned)cred.uid);
			snprintf(key, key_len, "uid %u", (unsigned)cred.uid);
		}
	} else if ((ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS))) {
		const struct sockaddr *sa = ci->client_addr;
		char host[INET6_ADDRSTRLEN] = "?";
		format_addr(sa, peer->addr, sizeof(peer->addr));
		peer->loopback = is_loopback(sa);
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host, sizeof(host));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host, sizeof(host));
		snprintf(key, key_len, "%s", host);
	}
}

/* ---- connections per remote address ---- */

/* The address of a remote TCP peer as a key; false for loopback and anything else. */
static bool remote_key(const struct sockaddr *sa, int *family, unsigned char addr[16])
{
	if (!sa || is_loopback(sa))
		return false;
	memset(addr, 0, 16);
	*family = sa->sa_family;
	if (sa->sa_family == AF_INET)
		memcpy(addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa->sa_family == AF_INET6)
		memcpy(addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	else
		return false;
	return true;
}

/* The slot of an address, or (create) a free one; NULL if none.  Under ip_lock. */
static struct ip_count *ip_slot(struct server *srv, int family, const unsigned char addr[16], bool create)
{
	struct ip_count *free_slot = NULL;

	assert(lock_held(&srv->ip_lock));
	for (size_t i = 0; i < srv->nips; i++) {
		struct ip_count *c = &srv->ips[i];
		if (c->family == family && memcmp(c->addr, addr, 16) == 0)
			return c;
		if (c->family == 0 && !free_slot)
			free_slot = c;
	}
	if (create && free_slot) {
		free_slot->family = family;
		memcpy(free_slot->addr, addr, 16);
		free_slot->count = 0;
	}
	return create ? free_slot : NULL;
}

/*
 * MHD's accept policy: a remote address already holding its share of
 * connections is refused.  The connection is counted here, in the same
 * locked step as the check: the pool's threads accept concurrently, and
 * counting later (when MHD reports the connection started) let several
 * pass the check at once.  MHD fails a connection after this only when out
 * of memory; that would leave one count behind.
 */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct server *srv = ((struct listener *)cls)->srv;
	unsigned char key[16];
	struct ip_count *c;
	bool ok = true;
	int family;

	(void)addrlen;
	if (!srv->per_ip_limit || !remote_key(addr, &family, key))
		return MHD_YES;
	pthread_mutex_lock(&srv->ip_lock);
	c = ip_slot(srv, family, key, true);
	ok = c && c->count < srv->per_ip_limit;
	if (ok)
		c->count++;
	else if (c && c->count == 0)
		c->family = 0;
	pthread_mutex_unlock(&srv->ip_lock);
	if (!ok) {
		char who[64];
		format_addr(addr, who, sizeof(who));
		log_debug("http: %s holds %u connections already; refused", who, srv->per_ip_limit);
	}
	return ok ? MHD_YES : MHD_NO;
}

/* Ties a counted connection to its address's slot, and uncounts it when it closes. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct server *srv = ((struct listener *)cls)->srv;
	struct ip_count *c = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		unsigned char key[16];
		int family;
		if (!srv->per_ip_limit || !ci || !remote_key(ci->client_addr, &family, key))
			return;
		pthread_mutex_lock(&srv->ip_lock);
		c = ip_slot(srv, family, key, false);   /* counted by on_accept */
		pthread_mutex_unlock(&srv->ip_lock);
		*socket_context = c;
	} else if (c) {
		pthread_mutex_lock(&srv->ip_lock);
		if (--c->count == 0)
			c->family = 0;
		pthread_mutex_unlock(&srv->ip_lock);
		*socket_context = NULL;
	}
}

/* ---- rate of mutating requests per client ---- */

static double monotonic_s(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/*
 * Takes a token from key's bucket: 0 when granted, else the seconds until
 * one is due.  A client not seen for a while has a full bucket, so evicting
 * the stalest of the probed slots for a newcomer loses nothing but under a
 * flood of distinct clients.
 */
static double rate_take(struct server *srv, const char *key)
{
	double now = monotonic_s(), wait = 0;
	uint32_t h = fnv1a(key);
	struct rate_bucket *b = NULL, *stalest = NULL;

	pthread_mutex_lock(&srv->rate_lock);
	for (uint32_t i = 0; i < RATE_PROBE && !b; i++) {
		struct rate_bucket *s = &srv->buckets[(h + i) & (RATE_SLOTS - 1)];
		if (strcmp(s->key, key) == 0)
			b = s;
		else if (!stalest || (stalest->key[0] && (!s->key[0] || s->stamp < stalest->stamp)))
			stalest = s;
	}
	if (!b) {
		b = stalest;
		snprintf(b->key, sizeof(b->key), "%s", key);
		b->tokens = srv->burst;
		b->stamp = now;
	}
	b->tokens = fmin(srv->burst, b->tokens + (now - b->stamp) * srv->rate);
	b->stamp = now;
	if (b->tokens >= 1)
		b->tokens -= 1;
	else
		wait = (1 - b->tokens) / srv->rate;
	pthread_mutex_unlock(&srv->rate_lock);
	return wait;
}

/* ---- request bodies ---- */

/* Charges n bytes to the budget of buffered bodies; false (nothing charged) when over it. */
static bool body_charge(struct server *srv, size_t n)
{
	size_t before = atomic_fetch_add(&srv->body_bytes, n);

	if (before + n <= srv->body_budget)
		return true;
	atomic_fetch_sub(&srv->body_bytes, n);
	return false;
}

/* Gives a body's buffer back at once: a request answered 413 or 503 needs none of it. */
static void body_drop(struct server *srv, struct request_state *rs)
{
	atomic_fetch_sub(&srv->body_bytes, rs->cap);
	free(rs->body);
	rs->body = NULL;
	rs->len = rs->cap = 0;
}

/* Appends a chunk of the body; -1 when out of memory.  Sets the flags that turn into 413 or 503. */
static int body_append(struct server *srv, struct request_state *rs, const char *data, size_t n)
{
	if (rs->too_large || rs->over_budget)
		return 0;   /* keep reading, then answer */
	if (rs->len + n > srv->max_body) {
		rs->too_large = true;
		body_drop(srv, rs);
		return 0;
	}
	if (rs->len + n + 1 > rs->cap) {
		size_t cap = rs->cap ? rs->cap : 4096;
		char *b;
		while (cap < rs->len + n + 1)
			cap *= 2;
		if (!body_charge(srv, cap - rs->cap)) {
			rs->over_budget = true;
			body_drop(srv, rs);
			return 0;
		}
		b = realloc(rs->body, cap);
		if (!b) {
			atomic_fetch_sub(&srv->body_bytes, cap - rs->cap);
			return -1;
		}
		rs->body = b;
		rs->cap = cap;
	}
	memcpy(rs->body + rs->len, data, n);
	rs->len += n;
	rs->body[rs->len] = '\0';
	return 0;
}

/* ---- requests ---- */

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct http_request *req = cls;

	(void)kind;
	if (req->nquery == HTTP_MAX_QUERY_ARGS)
		return MHD_NO;
	req->query[req->nquery].key = key;
	req->query[req->nquery].value = value;
	req->nquery++;
	return MHD_YES;
}

static enum MHD_Result send_response(struct MHD_Connection *conn, struct http_response *resp)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;

	if (resp->stream.arg) {
		mr = resp->stream.start(resp->stream.arg, conn);
		resp->stream.arg = NULL;   /* the response owns it now, or freed it */
	} else {
		mr = MHD_create_response_from_buffer(resp->body_len, resp->body ? resp->body : (char *)"",
						      resp->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
		if (mr)
			resp->body = NULL;   /* MHD owns it now */
	}
	if (!mr)
		return MHD_NO;
	if (resp->content_type)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
	MHD_add_response_header(mr, "X-Content-Type-Options", "nosniff");
	for (size_t i = 0; i < resp->nheaders; i++)
		MHD_add_response_header(mr, resp->headers[i].key, resp->headers[i].value);
	ret = MHD_queue_response(conn, (unsigned)resp->status, mr);
	MHD_destroy_response(mr);
	return ret;
}

/* 429 when the client's bucket is empty; false then. */
static bool rate_allowed(struct server *srv, const char *key, struct http_response *resp)
{
	char retry[24];
	double wait;

	if (!srv->buckets || (wait = rate_take(srv, key)) <= 0)
		return true;
	snprintf(retry, sizeof(retry), "%.0f", fmax(1, ceil(wait)));
	http_reply_error(resp, 429, "rate_limited",
			 "%s sent more than %g changes per second (bursts of %g); retry after %s s", key, srv->rate,
			 srv->burst, retry);
	http_add_header(resp, "Retry-After", retry);
	return false;
}

/*
 * A loopback TCP peer's uid, from the kernel's socket table: asked only on
 * routes that change something, the ones whose rules depend on who calls.
 */
static void learn_tcp_uid(struct MHD_Connection *conn, struct http_peer *peer)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	uid_t uid;

	if (ci && peer_uid_tcp(ci->connect_fd, &uid) == 0) {
		peer->has_uid = true;
		peer->uid = uid;
	}
}

static void route_request(struct server *srv, struct MHD_Connection *conn, struct http_request *req,
			  const char *key, enum read_access read_access, struct http_response *resp,
			  const struct route **matched)
{
	const struct route *r;
	char allow[64];
	int status = 404;

	r = router_match(dlprof_routes, req->method, req->path, req, &status, allow, sizeof(allow));
	*matched = r;
	if (!r) {
		if (status == 405) {
			http_reply_error(resp, 405, "method_not_allowed", "%s is not allowed on %s; use %s",
					 req->method, req->path, allow);
			http_add_header(resp, "Allow", allow);
		} else {
			http_reply_error(resp, 404, "not_found", "no such path: %s", req->path);
		}
		return;
	}
	if (!server_access_check(r->access, &req->peer, read_access, resp))
		return;
	if (r->access == ACCESS_MUTATE && !rate_allowed(srv, key, resp))
		return;
	if (r->access == ACCESS_MUTATE && req->peer.loopback)
		learn_tcp_uid(conn, &req->peer);
	router_handle(r, req, resp);
}

static void dispatch(struct listener *l, struct MHD_Connection *conn, const char *url, const char *method,
		     struct request_state *rs, struct http_response *resp, const struct route **matched)
{
	struct server *srv = l->srv;
	struct http_request req;
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	enum read_access read_access;
	char key[64];

	memset(&req, 0, sizeof(req));
	req.method = method;
	req.path = url;
	req.body = rs->body ? rs->body : "";
	req.body_len = rs->len;
	req.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	req.app = srv->app;
	fill_peer(l, conn, &req.peer, key, sizeof(key));
	pthread_mutex_lock(&srv->access_lock);
	if (auth && strncmp(auth, "Bearer ", 7) == 0)
		req.peer.token_ok = server_token_equal(auth + 7, srv->token);
	read_access = srv->read_access;
	pthread_mutex_unlock(&srv->access_lock);
	if (MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_query, &req) < 0 ||
	    req.nquery == HTTP_MAX_QUERY_ARGS) {
		http_reply_error(resp, 400, "bad_request", "too many query arguments (at most %d)",
				 HTTP_MAX_QUERY_ARGS - 1);
		return;
	}
	route_request(srv, conn, &req, key, read_access, resp, matched);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct listener *l = cls;
	struct server *srv = l->srv;
	struct request_state *rs = *req_cls;
	struct http_response resp = {0};
	const struct route *matched = NULL;
	enum MHD_Result ret;

	(void)version;
	if (!rs) {
		rs = calloc(1, sizeof(*rs));
		if (!rs)
			return MHD_NO;
		clock_gettime(CLOCK_MONOTONIC, &rs->start);
		*req_cls = rs;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
		return body_append(srv, rs, upload_data, n) < 0 ? MHD_NO : MHD_YES;
	}
	if (rs->too_large) {
		http_reply_error(&resp, 413, "too_large", "the body is larger than the limit of %zu bytes",
				 srv->max_body);
	} else if (rs->over_budget) {
		http_reply_error(&resp, 503, "busy", "request bodies held in memory exceed %zu MiB; retry shortly",
				 srv->body_budget >> 20);
		http_add_header(&resp, "Retry-After", "1");
	} else {
		dispatch(l, conn, url, method, rs, &resp, &matched);
	}
	stats_count_request(srv->app->stats, matched, resp.status, elapsed_s(&rs->start));
	log_debug("%s %s %s -> %d", l->name, method, url, resp.status);
	ret = send_response(conn, &resp);
	http_response_clear(&resp);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct listener *l = cls;
	struct request_state *rs = *req_cls;

	(void)conn;
	(void)toe;
	if (rs) {
		atomic_fetch_sub(&l->srv->body_bytes, rs->cap);
		free(rs->body);
		free(rs);
		*req_cls = NULL;
	}
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	if (n && line[n - 1] == '\n')
		line[n - 1] = '\0';
	log_debug("http: %s", line);
}

static int listener_start(struct server *srv, struct listener *l, const struct server_options *opt)
{
	struct mhd_pool_options po = {
		.workers = opt->threads,
		.max_connections = opt->max_connections,
		.connection_timeout_s = opt->connection_timeout_s,
		.connection_memory = SERVER_CONNECTION_POOL,
		.accept_policy = on_accept, .accept_cls = l,
		.on_request = on_request, .request_cls = l,
		.on_completed = on_completed, .completed_cls = l,
		.on_connection = on_connection, .connection_cls = l,
		.logger = on_mhd_log,
	};

	l->srv = srv;
	if (!(l->pool = mhd_pool_start(l->fd, l->name, &po)))
		return -1;
	log_info("listening on %s", l->name);
	return 0;
}

/* The limits of server.h; 0 from the caller means none. */
static int limits_init(struct server *srv, const struct server_options *opt)
{
	unsigned per_listener = opt->max_connections ? opt->max_connections : 1024u;

	srv->body_budget = opt->max_body * 4 > SERVER_BODY_BUDGET_MIN ? opt->max_body * 4 : SERVER_BODY_BUDGET_MIN;
	srv->per_ip_limit = opt->max_connections_per_ip;
	if (srv->per_ip_limit) {
		/* One slot per connection MHD may hold on the TCP listeners, and a few it accepts past them. */
		srv->nips = (size_t)per_listener * (size_t)(opt->nlisten > 0 ? opt->nlisten : 1) + 64;
		if (!(srv->ips = calloc(srv->nips, sizeof(*srv->ips))))
			return -1;
	}
	if (opt->ingest_rate > 0) {
		srv->rate = opt->ingest_rate;
		srv->burst = opt->ingest_burst >= 1 ? opt->ingest_burst : fmax(1, opt->ingest_rate);
		if (!(srv->buckets = calloc(RATE_SLOTS, sizeof(*srv->buckets))))
			return -1;
	}
	return 0;
}

/*
 * The Unix socket.  A socket the configuration names must be made; the
 * built-in default need not: where it cannot be (a development run on a
 * machine without /run/dlprofd), the daemon says so, names the flag, and
 * serves TCP alone.  Returns -1 when the server cannot go on.
 */
static int socket_start(struct server *srv, const struct server_options *opt)
{
	struct listener *l = &srv->listeners[srv->nlisteners];

	l->fd = -1;
	if (unix_listen(opt->socket_path, l) < 0) {
		if (l->fd >= 0)
			close(l->fd);
		l->fd = -1;
		if (!opt->socket_optional || opt->nlisten == 0)
			return -1;
		log_warnx("socket: %s is only the default: serving TCP alone "
			  "(--socket PATH puts the socket elsewhere, --socket '' turns it off)", opt->socket_path);
		return 0;
	}
	srv->nlisteners++;
	srv->socket_path = strdup(opt->socket_path);
	if (!srv->socket_path) {
		log_warnx("%s: out of memory", __func__);
		return -1;
	}
	return listener_start(srv, l, opt);
}

struct server *server_start(struct app *app, const struct server_options *opt)
{
	struct server *srv = calloc(1, sizeof(*srv));

	if (!srv)
		return NULL;
	srv->app = app;
	srv->max_body = opt->max_body;
	pthread_mutex_init(&srv->access_lock, NULL);
	pthread_mutex_init(&srv->ip_lock, NULL);
	pthread_mutex_init(&srv->rate_lock, NULL);
	srv->token = strdup("");
	srv->read_access = READ_ACCESS_ANY;
	if (!srv->token || limits_init(srv, opt) < 0) {
		log_warnx("%s: out of memory", __func__);
		goto fail;
	}
	for (int i = 0; i < opt->nlisten && i < 8; i++) {
		struct listener *l = &srv->listeners[srv->nlisteners];
		l->fd = -1;
		srv->nlisteners++;
		if (tcp_listen(opt->listen[i], l) < 0 || listener_start(srv, l, opt) < 0)
			goto fail;
	}
	if (opt->socket_path && opt->socket_path[0] && socket_start(srv, opt) < 0)
		goto fail;
	return srv;
fail:
	server_stop(srv);
	return NULL;
}

void server_set_access(struct server *srv, const char *token, enum read_access read_access)
{
	char *copy = strdup(token ? token : "");

	if (!copy)
		return;
	pthread_mutex_lock(&srv->access_lock);
	free(srv->token);
	srv->token = copy;
	srv->read_access = read_access;
	pthread_mutex_unlock(&srv->access_lock);
}

/* Waits up to max_s for the connections in flight to finish. */
static void drain(struct server *srv, double max_s)
{
	struct timespec start, pause = {0, 20 * 1000 * 1000};

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (elapsed_s(&start) < max_s) {
		unsigned active = 0;
		for (int i = 0; i < srv->nlisteners; i++)
			if (srv->listeners[i].pool)
				active += mhd_pool_connections(srv->listeners[i].pool);
		if (active == 0)
			return;
		nanosleep(&pause, NULL);
	}
}

void server_stop(struct server *srv)
{
	if (!srv)
		return;
	/* Stop accepting first; connections already open may finish. */
	for (int i = 0; i < srv->nlisteners; i++) {
		struct listener *l = &srv->listeners[i];
		if (l->pool)
			mhd_pool_quiesce(l->pool);
		if (l->fd >= 0)
			close(l->fd);
		l->fd = -1;
	}
	drain(srv, 3.0);
	for (int i = 0; i < srv->nlisteners; i++)
		mhd_pool_stop(srv->listeners[i].pool);
	if (srv->socket_path) {
		unlink(srv->socket_path);
		free(srv->socket_path);
	}
	pthread_mutex_destroy(&srv->access_lock);
	pthread_mutex_destroy(&srv->ip_lock);
	pthread_mutex_destroy(&srv->rate_lock);
	free(srv->ips);
	free(srv->buckets);
	free(srv->token);
	free(srv);
}
