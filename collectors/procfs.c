/*
 * Parsers for /proc text files and helpers that read them under a root
 * directory.  See procfs.h.  Parsers are strict about what they need and
 * ignore what they do not, since kernels add fields at the ends of lines.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "procfs.h"

/* The next space-separated integer at *p; -1 when there is none. */
static int
next_field(const char **p, long long *out)
{
	const char *q = *p;
	unsigned long long v = 0;
	int neg = 0;

	while (*q == ' ')
		q++;
	if (*q == '-') {
		neg = 1;
		q++;
	}
	if (!isdigit((unsigned char)*q))
		return -1;
	while (isdigit((unsigned char)*q))
		v = v * 10 + (unsigned long long)(*q++ - '0');
	if (*q != ' ' && *q != '\n' && *q != '\0')
		return -1;
	/* Negated as unsigned: "-9223372036854775808" (or longer) must not overflow a signed negation. */
	*out = (long long)(neg ? 0ULL - v : v);
	*p = q;
	return 0;
}

int
procfs_parse_stat(const char *text, struct procfs_stat *out)
{
	const char *open, *close, *p;
	long long v;
	size_t len;
	int field;

	/* comm may hold spaces and parentheses: it ends at the last ')'. */
	open = strchr(text, '(');
	close = strrchr(text, ')');
	if (open == NULL || close == NULL || close < open)
		return -1;
	memset(out, 0, sizeof(*out));
	len = (size_t)(close - open - 1);
	if (len >= sizeof(out->comm))
		len = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, len);
	out->comm[len] = '\0';
	p = close + 1;
	while (*p == ' ')
		p++;
	if (*p == '\0' || p[1] != ' ')
		return -1;
	out->state = *p++;
	out->processor = -1;
	/*
	 * Fields after state, numbered as in proc(5): 4 ppid, 10 minflt, 12
	 * majflt, 14 utime, 15 stime, 20 num_threads, 22 starttime, 24 rss, 39
	 * processor.  Walked by hand: sscanf with skipped fields cost more than
	 * the kernel's read of the file (50 processes every tick).
	 */
	for (field = 4; field <= 39; field++) {
		if (next_field(&p, &v) < 0)
			return field > 24 ? 0 : -1;
		switch (field) {
		case 4: out->ppid = (pid_t)v; break;
		case 10: out->minflt = (unsigned long long)v; break;
		case 12: out->majflt = (unsigned long long)v; break;
		case 14: out->utime = (unsigned long long)v; break;
		case 15: out->stime = (unsigned long long)v; break;
		case 20: out->num_threads = (long)v; break;
		case 22: out->starttime = (unsigned long long)v; break;
		case 24: out->rss_pages = v; break;
		case 39: out->processor = (int)v; break;
		default: break;
		}
	}
	return 0;
}

int
procfs_parse_cpu(const char *text, struct procfs_cpu *out)
{
	const char *p, *bt;
	int n;

	memset(out, 0, sizeof(*out));
	if (strncmp(text, "cpu ", 4) != 0)
		return -1;
	n = sscanf(text + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &out->user, &out->nice, &out->system,
		   &out->idle, &out->iowait, &out->irq, &out->softirq, &out->steal);
	if (n < 4)
		return -1;
	for (p = strstr(text, "\ncpu"); p != NULL; p = strstr(p + 1, "\ncpu"))
		if (isdigit((unsigned char)p[4]))
			out->ncpu++;
	out->btime = -1;
	bt = strstr(text, "\nbtime ");
	if (bt != NULL)
		out->btime = strtoll(bt + 7, NULL, 10);
	return 0;
}

int
procfs_parse_schedstat(const char *text, struct procfs_schedstat *out)
{
	long long v[3];
	int i;

	for (i = 0; i < 3; i++)
		if (next_field(&text, &v[i]) < 0 || v[i] < 0)
			return -1;
	out->cpu_ns = (unsigned long long)v[0];
	out->wait_ns = (unsigned long long)v[1];
	out->slices = (unsigned long long)v[2];
	return 0;
}

static long long
meminfo_kb(const char *text, const char *key)
{
	const char *p = text;
	size_t klen = strlen(key);

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':')
			return strtoll(p + klen + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return -1;
}

int
procfs_parse_meminfo(const char *text, struct procfs_mem *out)
{
	out->total_kb = meminfo_kb(text, "MemTotal");
	out->free_kb = meminfo_kb(text, "MemFree");
	out->available_kb = meminfo_kb(text, "MemAvailable");
	if (out->total_kb < 0 || out->free_kb < 0)
		return -1;
	/* Kernels before 3.14 lack MemAvailable; free memory is the honest lower bound. */
	if (out->available_kb < 0)
		out->available_kb = out->free_kb;
	return 0;
}

int
procfs_parse_loadavg(const char *text, struct procfs_load *out)
{
	if (sscanf(text, "%lf %lf %lf %ld/%ld", &out->load1, &out->load5, &out->load15, &out->running, &out->total) != 5)
		return -1;
	return 0;
}

static const char *
status_value(const char *text, const char *key)
{
	const char *p = text;
	size_t klen = strlen(key);

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
			p += klen + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return NULL;
}

long long
procfs_status_int(const char *text, const char *key)
{
	const char *v = status_value(text, key);

	if (v == NULL || !isdigit((unsigned char)*v))
		return -1;
	return strtoll(v, NULL, 10);
}

int
procfs_status_str(const char *text, const char *key, char *buf, size_t len)
{
	const char *v = status_value(text, key);
	size_t n;

	if (v == NULL || len == 0)
		return -1;
	n = strcspn(v, "\n");
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return 0;
}

/*
 * Walks a cpulist such as "0-3,8,10-11", handing each range a..b (a <= b)
 * to range(a, b, arg), which may refuse it with -1.  Returns 0 with *rest
 * at what follows the list, or -1 when it is malformed or a range refused.
 */
static int
procfs_cpulist_walk(const char *list, int (*range)(long a, long b, void *arg), void *arg, const char **rest)
{
	const char *p = list;
	char *end;
	long a, b;

	while (*p == ' ')
		p++;
	if (*p == '\0' || *p == '\n') {
		*rest = p;
		return 0;
	}
	for (;;) {
		if (!isdigit((unsigned char)*p))
			return -1;
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -1;
			b = strtol(end + 1, &end, 10);
		}
		if (b < a || range(a, b, arg) < 0)
			return -1;
		if (*end != ',')
			break;
		p = end + 1;
	}
	*rest = end;
	return 0;
}

struct procfs_mask {
	unsigned char *mask;
	int max;
};

static int
procfs_mask_range(long a, long b, void *arg)
{
	struct procfs_mask *m = arg;
	long i;

	for (i = a; i <= b && i < m->max; i++)
		m->mask[i] = 1;
	return 0;
}

int
procfs_cpulist_mask(const char *list, unsigned char *mask, int max)
{
	struct procfs_mask m = {mask, max};
	const char *rest;

	memset(mask, 0, (size_t)max);
	return procfs_cpulist_walk(list, procfs_mask_range, &m, &rest);
}

/* Linux's NR_CPUS tops out at 8192; a list naming more is corrupt. */
#define PROCFS_MAX_CPUS 65536

static int
procfs_count_range(long a, long b, void *arg)
{
	int *count = arg;

	/* CPU numbers are small; anything beyond is not a cpulist (and would overflow). */
	if (b >= PROCFS_MAX_CPUS || *count > PROCFS_MAX_CPUS)
		return -1;
	*count += (int)(b - a + 1);
	return 0;
}

int
procfs_cpulist_count(const char *list)
{
	const char *rest;
	int count = 0;

	if (procfs_cpulist_walk(list, procfs_count_range, &count, &rest) < 0)
		return -1;
	if (*rest != '\0' && *rest != '\n' && *rest != ' ')
		return -1;
	return count;
}

int
procfs_environ_get(const char *env, size_t len, const char *name, char *buf, size_t buflen)
{
	size_t nlen = strlen(name), i = 0, vlen;
	const char *entry, *nul;

	while (i < len) {
		entry = env + i;
		nul = memchr(entry, '\0', len - i);
		vlen = nul != NULL ? (size_t)(nul - entry) : len - i;
		if (vlen > nlen && strncmp(entry, name, nlen) == 0 && entry[nlen] == '=') {
			vlen -= nlen + 1;
			if (buflen == 0)
				return -1;
			if (vlen >= buflen)
				vlen = buflen - 1;
			memcpy(buf, entry + nlen + 1, vlen);
			buf[vlen] = '\0';
			return 0;
		}
		i += vlen + 1;
	}
	return -1;
}

/* Reads a whole descriptor and closes it, keeping the read's errno. */
static ssize_t
procfs_read_close(int fd, char *buf, size_t len)
{
	ssize_t n = procfs_reread(fd, buf, len);
	int saved = errno;

	close(fd);
	errno = saved;
	return n;
}

/* Opens the file at a printf-style path for reading; -1 with errno set. */
static int
procfs_vopen(const char *fmt, va_list ap)
{
	char path[512];
	int n = vsnprintf(path, sizeof(path), fmt, ap);

	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}

ssize_t
procfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -1 : procfs_read_close(fd, buf, len);
}

ssize_t
procfs_readf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int fd;

	va_start(ap, fmt);
	fd = procfs_vopen(fmt, ap);
	va_end(ap);
	return fd < 0 ? -1 : procfs_read_close(fd, buf, len);
}

int
procfs_openf(const char *fmt, ...)
{
	va_list ap;
	int fd;

	va_start(ap, fmt);
	fd = procfs_vopen(fmt, ap);
	va_end(ap);
	return fd;
}

ssize_t
procfs_reread(int fd, char *buf, size_t len)
{
	ssize_t n, total = 0;

	if (len == 0) {
		errno = EINVAL;
		return -1;
	}
	/*
	 * procfs hands a small file whole to one read; a read that fills less
	 * than asked is the end, so no second call is spent to see EOF.
	 */
	while ((size_t)total < len - 1) {
		n = pread(fd, buf + total, len - 1 - (size_t)total, (off_t)total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		total += n;
		if (n == 0 || (size_t)n < len - 1 - (size_t)(total - n))
			break;
	}
	buf[total] = '\0';
	return total;
}

static int
cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Appends id to the growing array *v; -1 when out of memory. */
static int
ids_push(pid_t **v, size_t *n, size_t *cap, pid_t id)
{
	pid_t *nv;

	if (*n == *cap) {
		nv = array_grow(*v, cap, *n + 1, sizeof(*nv));
		if (nv == NULL)
			return -1;
		*v = nv;
	}
	(*v)[(*n)++] = id;
	return 0;
}

/*
 * getdents64 into a buffer on the stack rather than opendir: the sampler
 * lists task directories every few seconds, and opendir's 32 KiB buffer,
 * returned to the kernel at each closedir by the allocator, cost a madvise
 * and fresh page faults on every listing.
 */
ssize_t
procfs_list_ids(const char *dir, pid_t **out)
{
	char buf[8192] __attribute__((aligned(8)));
	pid_t *v = NULL;
	size_t n = 0, cap = 0;
	ssize_t got, off;
	char *end;
	long id;
	int fd, saved;

	*out = NULL;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((got = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < got;) {
			struct dirent64 *e = (struct dirent64 *)(void *)(buf + off);
			off += e->d_reclen;
			if (!isdigit((unsigned char)e->d_name[0]))
				continue;
			id = strtol(e->d_name, &end, 10);
			if (*end != '\0' || id <= 0)
				continue;
			if (ids_push(&v, &n, &cap, (pid_t)id) < 0)
				goto fail;
		}
	}
	if (got < 0)
		goto fail;
	close(fd);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_pid);
	*out = v;
	return (ssize_t)n;
fail:
	saved = errno;
	close(fd);
	free(v);
	errno = saved;
	return -1;
}

long
procfs_hz(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	return hz > 0 ? hz : 100;
}

long
procfs_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? ps : 4096;
}
