/*
 * libFuzzer target for request routing: the input is "METHOD\nPATH?QUERY",
 * decoded the way libmicrohttpd hands it to server.c (path and query
 * %-decoded, the query split at '&' and '=', a NUL ending a value), and
 * matched against the daemon's real route table.  Handlers are stubs that
 * echo their captures in an error reply (generated from daemon/routes.c, so
 * new routes are fuzzed too), except the static file handler, which runs
 * for real against a web root with a secret file, a hidden file and a
 * symlink leading out: nothing outside the root may ever be served.
 */
#undef NDEBUG   /* the checks below are the point */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "app.h"
#include "router.h"

#define SECRET "FUZZ-SECRET-MARKER"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_stub_handler(const struct http_request *req, struct http_response *resp);

static struct app fuzz_app;
static char fuzz_dir[200];

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[320];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert(f);
	fputs(text, f);
	fclose(f);
}

static void cleanup(void)
{
	char cmd[320];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fuzz_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_router: could not remove %s\n", fuzz_dir);
}

/* root/web is the web root; root/secret.txt and web/.hidden must stay unseen. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char web[240];
	char path[300];

	(void)argc;
	(void)argv;
	/* $TMPDIR: run.sh's own directory, removed even after a crash. */
	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/dlprof-fuzz-router-XXXXXX",
		 getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
	assert(mkdtemp(fuzz_dir));
	atexit(cleanup);
	snprintf(web, sizeof(web), "%s/web", fuzz_dir);
	assert(mkdir(web, 0755) == 0);
	snprintf(path, sizeof(path), "%s/sub", web);
	assert(mkdir(path, 0755) == 0);
	write_file(fuzz_dir, "secret.txt", SECRET "\n");
	write_file(web, "index.html", "<!doctype html><title>x</title>\n");
	write_file(web, "app.js", "export {};\n");
	write_file(web, ".hidden", SECRET "\n");
	write_file(path, "a.css", "body{}\n");
	snprintf(path, sizeof(path), "%s/link.txt", web);
	assert(symlink("../secret.txt", path) == 0);
	snprintf(path, sizeof(path), "%s/sub/up.txt", web);
	assert(symlink("../../secret.txt", path) == 0);
	fuzz_app.web_root = web;
	return 0;
}

/* Decodes %XX in place like MHD_http_unescape; a bad escape stays as is. */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		unsigned v;
		if (r[0] == '%' && r[1] && r[2] && sscanf(r + 1, "%2x", &v) == 1 &&
		    strchr("0123456789abcdefABCDEF", r[1]) && strchr("0123456789abcdefABCDEF", r[2])) {
			*w++ = (char)v;
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* Splits the query in place into req->query, at most as many as server.c keeps. */
static void split_query(char *q, struct http_request *req)
{
	while (q && *q && req->nquery < HTTP_MAX_QUERY_ARGS) {
		char *amp = strchr(q, '&'), *eq;
		if (amp)
			*amp = '\0';
		eq = strchr(q, '=');
		if (eq)
			*eq = '\0';
		unescape(q);
		if (eq)
			unescape(eq + 1);
		req->query[req->nquery].key = q;
		req->query[req->nquery].value = eq ? eq + 1 : NULL;
		req->nquery++;
		q = amp ? amp + 1 : NULL;
	}
}

/* What the error reply of a handler or of server.c must always be: ASCII JSON. */
static void check_reply(const struct http_response *resp)
{
	assert(resp->status >= 200 && resp->status <= 599);
	assert(resp->body && resp->body_len > 0);
	if (resp->content_type && strcmp(resp->content_type, "application/json") == 0) {
		json_t *v = json_loadb(resp->body, resp->body_len, 0, NULL);
		for (size_t i = 0; i < resp->body_len; i++)
			assert((unsigned char)resp->body[i] < 0x80);
		assert(json_is_object(v));
		json_decref(v);
	}
}

/* A match must honour the pattern: captures are single, non-empty segments. */
static void check_match(const struct route *r, const char *method, const struct http_request *req)
{
	assert(strcmp(r->method, method) == 0 || (strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0));
	assert(req->nparams <= HTTP_MAX_PATH_PARAMS);
	for (size_t i = 0; i < req->nparams; i++) {
		char key[80];
		snprintf(key, sizeof(key), "{%s}", req->params[i].key);
		assert(strstr(r->pattern, key));
		assert(req->params[i].value[0] != '\0' && !strchr(req->params[i].value, '/'));
		assert(strstr(req->path, req->params[i].value));
	}
}

static void route_one(const char *method, struct http_request *req)
{
	struct http_response resp = {0};
	char allow[64];
	int status = 0;
	const struct route *r = router_match(dlprof_routes, method, req->path, req, &status, allow, sizeof(allow));

	if (!r) {
		assert(status == 404 || status == 405);
		assert(status == 404 || allow[0] != '\0');
		/* As server.c answers it. */
		if (status == 405)
			http_reply_error(&resp, 405, "method_not_allowed", "%s is not allowed on %s; use %s", method,
					 req->path, allow);
		else
			http_reply_error(&resp, 404, "not_found", "no such path: %s", req->path);
	} else {
		check_match(r, method, req);
		r->handler(req, &resp);
		if (r->handler == api_static) {
			assert(resp.status == 200 || resp.status == 404);
			assert(resp.status != 200 || !memmem(resp.body, resp.body_len, SECRET, strlen(SECRET)));
		}
	}
	check_reply(&resp);
	http_response_clear(&resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_request req;
	char *buf = malloc(size + 1), *nl, *q;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	nl = strchr(buf, '\n');
	if (!nl || nl - buf > 16 || buf[0] == '\0') {
		free(buf);
		return 0;
	}
	*nl = '\0';
	memset(&req, 0, sizeof(req));
	req.app = &fuzz_app;
	req.method = buf;
	req.body = "";
	req.path = nl + 1;
	q = strchr(nl + 1, '?');
	if (q)
		*q++ = '\0';
	unescape(nl + 1);
	split_query(q, &req);
	/* MHD hands over absolute paths only. */
	if (req.path[0] == '/')
		route_one(buf, &req);
	free(buf);
	return 0;
}

/* Every stub answers like a handler refusing its input: the captures echoed in an error. */
void fuzz_stub_handler(const struct http_request *req, struct http_response *resp)
{
	const char *id = http_param(req, "id"), *name = http_param(req, "name");
	const char *state = http_query(req, "state"), *series = http_query(req, "name");

	http_reply_error(resp, 400, "bad_request", "id '%s' name '%s' state '%s' series '%s' workload '%s'",
			 id ? id : "", name ? name : "", state ? state : "", series ? series : "",
			 http_query(req, "workload") ? http_query(req, "workload") : "");
}
