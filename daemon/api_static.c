/*
 * The dashboard's static files from the web root.  Paths are checked
 * segment by segment: no "..", no hidden files, no backslashes or NULs; the
 * file is then opened beneath the web root following no symbolic link in
 * any component, so nothing outside the root is served.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "api.h"
#include "app.h"

#define STATIC_MAX_FILE (16 * 1024 * 1024)

static const struct {
	const char *ext;
	const char *type;
} content_types[] = {
	{".html", "text/html; charset=utf-8"},
	{".js", "text/javascript; charset=utf-8"},
	{".mjs", "text/javascript; charset=utf-8"},
	{".css", "text/css; charset=utf-8"},
	{".json", "application/json"},
	{".svg", "image/svg+xml"},
	{".png", "image/png"},
	{".ico", "image/x-icon"},
	{".txt", "text/plain; charset=utf-8"},
	{".map", "application/json"},
	{".woff2", "font/woff2"},
};

static const char *content_type_of(const char *path)
{
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot && i < sizeof(content_types) / sizeof(content_types[0]); i++)
		if (strcmp(dot, content_types[i].ext) == 0)
			return content_types[i].type;
	return "application/octet-stream";
}

/* Whether rel (without the leading '/') is a safe relative path. */
static bool path_is_safe(const char *rel)
{
	const char *seg = rel;

	if (rel[0] == '\0' || strlen(rel) > 512 || strchr(rel, '\\'))
		return false;
	while (*seg) {
		size_t len = strcspn(seg, "/");
		if (len == 0 || seg[0] == '.')
			return false;   /* "//", ".", "..", hidden files */
		seg += len;
		if (*seg == '/')
			seg++;
	}
	return rel[strlen(rel) - 1] != '/';
}

/*
 * Opens rel below dirfd without following any symbolic link, in any
 * component (openat2 RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH, Linux 5.6);
 * older kernels fall back to O_NOFOLLOW, which guards the last component.
 */
static int open_beneath(int dirfd, const char *rel)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		return openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return (int)fd;
}

static int read_file(int dirfd, const char *rel, char **out, size_t *len)
{
	struct stat sb;
	char *buf;
	size_t got = 0;
	int fd = open_beneath(dirfd, rel);

	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > STATIC_MAX_FILE) {
		close(fd);
		errno = ENOENT;
		return -1;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (!buf) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	*out = buf;
	*len = got;
	return 0;
}

void api_static(const struct http_request *req, struct http_response *resp)
{
	const char *rel = req->path[0] == '/' ? req->path + 1 : req->path;
	char *body;
	size_t len;
	int dirfd;

	if (strncmp(rel, "api/", 4) == 0) {
		http_reply_error(resp, 404, "not_found", "no such path: %s", req->path);
		return;
	}
	if (rel[0] == '\0')
		rel = "index.html";
	if (!path_is_safe(rel)) {
		http_reply_error(resp, 404, "not_found", "no such file: %s", req->path);
		return;
	}
	dirfd = open(req->app->web_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		http_reply_error(resp, 404, "not_found", "the dashboard is not installed (web_root %s)",
				 req->app->web_root);
		return;
	}
	if (read_file(dirfd, rel, &body, &len) < 0) {
		int err = errno;
		close(dirfd);
		if (err == ENOMEM)
			http_reply_oom(resp);
		else
			http_reply_error(resp, 404, "not_found", "no such file: %s", req->path);
		return;
	}
	close(dirfd);
	http_reply_text(resp, 200, content_type_of(rel), body, len);
	http_add_header(resp, "Cache-Control", "no-cache");
	http_add_header(resp, "Content-Security-Policy",
			"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
			"object-src 'none'; base-uri 'none'; frame-ancestors 'none'");
}
