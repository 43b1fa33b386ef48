/*
 * Where the collectors' tests find their fixture trees: under
 * $DLPROF_SRCDIR/tests/fixtures (set by make check), or relative to the
 * current directory when a test is run by hand from the source tree.
 */
#ifndef DLPROF_COLLECTORS_FIXTURE_H
#define DLPROF_COLLECTORS_FIXTURE_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline const char *
fixture_path(char *buf, size_t len, const char *rel)
{
	const char *src = getenv("DLPROF_SRCDIR");

	snprintf(buf, len, "%s/tests/fixtures/%s", src != NULL ? src : ".", rel);
	return buf;
}

/* Whether a file whose path contains name is mapped in this process (dlopen'ed libraries). */
static inline int
fixture_mapped(const char *name)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (f == NULL)
		return -1;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, name) != NULL;
	fclose(f);
	return found;
}

/*
 * Copies the fixture tree rel over the directory dst, rewriting each file in
 * place (same inode), so a collector that keeps /proc files open and
 * re-reads them sees the new snapshot as it would see procfs change.
 * Returns 0, or -1 when a file cannot be copied.
 */
static inline int
fixture_install(const char *rel, const char *dst)
{
	char src[1024], s[2048], d[2048], path[2048], buf[65536];
	struct dirent *e;
	struct stat st;
	ssize_t n;
	int in, out, rc = 0;
	DIR *dir;

	fixture_path(src, sizeof(src), rel);
	if ((dir = opendir(src)) == NULL)
		return -1;
	mkdir(dst, 0755);
	while (rc == 0 && (e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(s, sizeof(s), "%s/%s", rel, e->d_name);
		snprintf(d, sizeof(d), "%s/%s", dst, e->d_name);
		snprintf(path, sizeof(path), "%s/%s", src, e->d_name);
		if (stat(path, &st) < 0) {
			rc = -1;
		} else if (S_ISDIR(st.st_mode)) {
			rc = fixture_install(s, d);
		} else {
			in = open(path, O_RDONLY);
			out = open(d, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
				if (write(out, buf, (size_t)n) != n)
					rc = -1;
			if (in < 0 || out < 0)
				rc = -1;
			if (in >= 0)
				close(in);
			if (out >= 0)
				close(out);
		}
	}
	closedir(dir);
	return rc;
}

#endif
