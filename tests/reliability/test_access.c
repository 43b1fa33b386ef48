/*
 * The access rule and the token comparison of server.c, every path: reads
 * under read_access any, local and token from loopback, the Unix socket and
 * remote peers with and without the token; mutations from each; an unknown
 * read_access failing closed; tokens equal only when equal, and an empty
 * secret matching nothing.  tests/reliability/test_remote.py drives the same
 * rules through a real non-loopback connection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "server.h"

enum who { LOOPBACK, UNIX_SOCKET, REMOTE, REMOTE_TOKEN };

static struct http_peer peer_of(enum who w)
{
	struct http_peer p;

	memset(&p, 0, sizeof(p));
	p.loopback = w == LOOPBACK;
	p.unix_socket = w == UNIX_SOCKET;
	p.token_ok = w == REMOTE_TOKEN;
	return p;
}

/*
 * Runs the rule under the setting named read_access (a name the
 * configuration does not know becomes a value outside the enum); checks a
 * refusal is a 403 JSON error and nothing else.
 */
static bool allowed(enum route_access access, enum who w, const char *read_access)
{
	struct http_response resp = {0};
	struct http_peer p = peer_of(w);
	int mode = config_enum_value(config_read_access_names, read_access);
	bool ok = server_access_check(access, &p, (enum read_access)mode, &resp);

	if (ok) {
		assert_int_equal(resp.status, 0);
	} else {
		assert_int_equal(resp.status, 403);
		assert_non_null(strstr(resp.body, "\"error\":\"forbidden\""));
	}
	http_response_clear(&resp);
	return ok;
}

static void test_mutations(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		const char *ra = (const char *[]){"any", "local", "token"}[i];
		assert_true(allowed(ACCESS_MUTATE, LOOPBACK, ra));
		assert_true(allowed(ACCESS_MUTATE, UNIX_SOCKET, ra));
		assert_false(allowed(ACCESS_MUTATE, REMOTE, ra));
		assert_true(allowed(ACCESS_MUTATE, REMOTE_TOKEN, ra));
	}
}

static void test_reads_any(void **state)
{
	(void)state;
	assert_true(allowed(ACCESS_READ, LOOPBACK, "any"));
	assert_true(allowed(ACCESS_READ, UNIX_SOCKET, "any"));
	assert_true(allowed(ACCESS_READ, REMOTE, "any"));
	assert_true(allowed(ACCESS_READ, REMOTE_TOKEN, "any"));
}

static void test_reads_local(void **state)
{
	(void)state;
	assert_true(allowed(ACCESS_READ, LOOPBACK, "local"));
	assert_true(allowed(ACCESS_READ, UNIX_SOCKET, "local"));
	assert_false(allowed(ACCESS_READ, REMOTE, "local"));
	/* local means local: a token does not widen it */
	assert_false(allowed(ACCESS_READ, REMOTE_TOKEN, "local"));
}

static void test_reads_token(void **state)
{
	(void)state;
	assert_true(allowed(ACCESS_READ, LOOPBACK, "token"));
	assert_true(allowed(ACCESS_READ, UNIX_SOCKET, "token"));
	assert_false(allowed(ACCESS_READ, REMOTE, "token"));
	assert_true(allowed(ACCESS_READ, REMOTE_TOKEN, "token"));
}

static void test_unknown_setting_fails_closed(void **state)
{
	(void)state;
	assert_false(allowed(ACCESS_READ, REMOTE, ""));
	assert_false(allowed(ACCESS_READ, REMOTE_TOKEN, "ANY"));
	assert_true(allowed(ACCESS_READ, LOOPBACK, "bogus"));
}

static void test_token_equal(void **state)
{
	(void)state;
	assert_true(server_token_equal("s3cret-token", "s3cret-token"));
	assert_false(server_token_equal("s3cret-tokeN", "s3cret-token"));
	assert_false(server_token_equal("s3cret", "s3cret-token"));         /* a prefix */
	assert_false(server_token_equal("s3cret-token-and-more", "s3cret-token"));
	assert_false(server_token_equal("", "s3cret-token"));
	assert_false(server_token_equal("s3cret-token\n", "s3cret-token"));
}

static void test_empty_secret_matches_nothing(void **state)
{
	(void)state;
	assert_false(server_token_equal("", ""));
	assert_false(server_token_equal("anything", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_reads_any),
		cmocka_unit_test(test_reads_local),
		cmocka_unit_test(test_reads_token),
		cmocka_unit_test(test_unknown_setting_fails_closed),
		cmocka_unit_test(test_token_equal),
		cmocka_unit_test(test_empty_secret_matches_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
