/*
 * Tests of daemon/peer_uid.c: the uid behind a loopback TCP connection, read
 * from the kernel's socket table, for a client of our own uid and (as root)
 * for a child that switched to uid 65534; over IPv4, IPv6, and IPv4 to a
 * dual-stack listener (the peer's address shows as ::ffff:127.0.0.1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "peer_uid.h"

#define OTHER_UID 65534

/* A listener on family's loopback (or any address, dual), port chosen by the kernel; -1 if none. */
static int listen_on(int family, bool any, struct sockaddr_storage *addr, socklen_t *len)
{
	int fd = socket(family, SOCK_STREAM, 0), off = 0;

	memset(addr, 0, sizeof(*addr));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)addr;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)addr;
		a->sin6_family = AF_INET6;
		a->sin6_addr = any ? in6addr_any : in6addr_loopback;
		*len = sizeof(*a);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	}
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, *len) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)addr, len) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * Connects to the listener as uid (-1: as we are) from a child, which holds
 * the connection until the parent has asked; returns what peer_uid_tcp said.
 */
static int uid_of_client(int lfd, const struct sockaddr *to, socklen_t len, int family, int as_uid, uid_t *uid)
{
	int hold[2], cfd, r, status;
	pid_t child;
	char c = 0;

	assert_int_equal(pipe(hold), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct sockaddr_in v4 = {.sin_family = AF_INET};
		int s;

		close(hold[1]);
		if (as_uid >= 0 && (setgid((gid_t)as_uid) < 0 || setuid((uid_t)as_uid) < 0))
			_exit(2);
		s = socket(family, SOCK_STREAM, 0);
		if (family == AF_INET && to->sa_family == AF_INET6) {
			/* IPv4 client of a dual-stack listener. */
			v4.sin_port = ((const struct sockaddr_in6 *)to)->sin6_port;
			v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			to = (const struct sockaddr *)&v4;
			len = sizeof(v4);
		}
		if (s < 0 || connect(s, to, len) < 0)
			_exit(3);
		if (read(hold[0], &c, 1) < 0)
			_exit(4);
		_exit(0);
	}
	close(hold[0]);
	cfd = accept(lfd, NULL, NULL);
	assert_true(cfd >= 0);
	r = peer_uid_tcp(cfd, uid);
	close(cfd);
	close(hold[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return r;
}

static void check(int listen_family, bool any, int client_family)
{
	struct sockaddr_storage addr;
	socklen_t len;
	uid_t uid = 12345;
	int lfd = listen_on(listen_family, any, &addr, &len);

	if (lfd < 0) {
		print_message("no listener for family %d here: skipped\n", listen_family);
		return;
	}
	assert_int_equal(uid_of_client(lfd, (struct sockaddr *)&addr, len, client_family, -1, &uid), 0);
	assert_int_equal(uid, getuid());
	if (geteuid() == 0) {
		assert_int_equal(uid_of_client(lfd, (struct sockaddr *)&addr, len, client_family, OTHER_UID, &uid), 0);
		assert_int_equal(uid, OTHER_UID);
	} else {
		print_message("not root: the other uid's case is skipped\n");
	}
	close(lfd);
}

static void ipv4(void **state)
{
	(void)state;
	check(AF_INET, false, AF_INET);
}

static void ipv6(void **state)
{
	(void)state;
	check(AF_INET6, false, AF_INET6);
}

static void ipv4_to_a_dual_stack_listener(void **state)
{
	(void)state;
	check(AF_INET6, true, AF_INET);
}

static void not_a_tcp_socket(void **state)
{
	int sv[2];
	uid_t uid;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(peer_uid_tcp(sv[0], &uid), -1);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ipv4),
		cmocka_unit_test(ipv6),
		cmocka_unit_test(ipv4_to_a_dual_stack_listener),
		cmocka_unit_test(not_a_tcp_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
