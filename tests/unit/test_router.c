/*
 * The router: literal and {param} segments, the static catch-all, 404 vs
 * 405 with the Allow list, HEAD as GET, and paths that must not match.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "router.h"

static void h_list(const struct http_request *req, struct http_response *resp) { (void)req; (void)resp; }
static void h_create(const struct http_request *req, struct http_response *resp) { (void)req; (void)resp; }
static void h_one(const struct http_request *req, struct http_response *resp) { (void)req; (void)resp; }
static void h_end(const struct http_request *req, struct http_response *resp) { (void)req; (void)resp; }
static void h_static(const struct http_request *req, struct http_response *resp) { (void)req; (void)resp; }

static const struct route table[] = {
	{"GET", "/api/v1/jobs", h_list, ACCESS_READ},
	{"POST", "/api/v1/jobs", h_create, ACCESS_MUTATE},
	{"GET", "/api/v1/jobs/{id}", h_one, ACCESS_READ},
	{"POST", "/api/v1/jobs/{id}/end", h_end, ACCESS_MUTATE},
	{"GET", "/*", h_static, ACCESS_READ},
	{NULL, NULL, NULL, ACCESS_READ},
};

static const struct route *match(const char *method, const char *path, struct http_request *req, int *status,
				 char *allow)
{
	memset(req, 0, sizeof(*req));
	*status = 0;
	return router_match(table, method, path, req, status, allow, 64);
}

static void test_literal(void **state)
{
	struct http_request req;
	char allow[64];
	int status;

	(void)state;
	assert_ptr_equal(match("GET", "/api/v1/jobs", &req, &status, allow)->handler, h_list);
	assert_ptr_equal(match("POST", "/api/v1/jobs", &req, &status, allow)->handler, h_create);
	assert_int_equal(req.nparams, 0);
}

static void test_capture(void **state)
{
	struct http_request req;
	char allow[64];
	int status;
	const struct route *r = match("POST", "/api/v1/jobs/42/end", &req, &status, allow);

	(void)state;
	assert_non_null(r);
	assert_ptr_equal(r->handler, h_end);
	assert_int_equal(req.nparams, 1);
	assert_string_equal(http_param(&req, "id"), "42");
	assert_null(http_param(&req, "other"));
}

static void test_method_not_allowed(void **state)
{
	struct http_request req;
	char allow[64];
	int status;

	(void)state;
	assert_null(match("DELETE", "/api/v1/jobs/7", &req, &status, allow));
	assert_int_equal(status, 405);
	assert_string_equal(allow, "GET");
	assert_null(match("PUT", "/api/v1/jobs", &req, &status, allow));
	assert_int_equal(status, 405);
	assert_string_equal(allow, "GET, POST");
}

static void test_not_found(void **state)
{
	struct http_request req;
	char allow[64];
	int status;

	(void)state;
	/* The static catch-all serves only GET; other methods on unknown paths are 404. */
	assert_null(match("POST", "/api/v1/unknown", &req, &status, allow));
	assert_int_equal(status, 404);
	assert_null(match("POST", "/api/v1/jobs/1/end/extra", &req, &status, allow));
	assert_int_equal(status, 404);
	assert_null(match("GET", "relative", &req, &status, allow));
	assert_int_equal(status, 404);
}

static void test_empty_segment_is_no_id(void **state)
{
	struct http_request req;
	char allow[64];
	int status;
	const struct route *r;

	(void)state;
	r = match("POST", "/api/v1/jobs//end", &req, &status, allow);
	assert_null(r);
	/* GET falls to the static catch-all, which refuses such paths itself. */
	r = match("GET", "/api/v1/jobs/", &req, &status, allow);
	assert_ptr_equal(r->handler, h_static);
}

static void test_head_is_get(void **state)
{
	struct http_request req;
	char allow[64];
	int status;

	(void)state;
	assert_ptr_equal(match("HEAD", "/api/v1/jobs/3", &req, &status, allow)->handler, h_one);
}

static void test_static_catch_all(void **state)
{
	struct http_request req;
	char allow[64];
	int status;

	(void)state;
	assert_ptr_equal(match("GET", "/", &req, &status, allow)->handler, h_static);
	assert_ptr_equal(match("GET", "/js/app.js", &req, &status, allow)->handler, h_static);
}

static void test_long_capture_rejected(void **state)
{
	struct http_request req;
	char allow[64], path[1024];
	int status;

	(void)state;
	memset(path, 'a', sizeof(path));
	memcpy(path, "/api/v1/jobs/", 13);
	memcpy(path + sizeof(path) - 5, "/end", 5);
	assert_null(match("POST", path, &req, &status, allow));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literal),
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_method_not_allowed),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_empty_segment_is_no_id),
		cmocka_unit_test(test_head_is_get),
		cmocka_unit_test(test_static_catch_all),
		cmocka_unit_test(test_long_capture_rejected),
	};
	return cmocka_run_group_tests_name("router", tests, NULL, NULL);
}
