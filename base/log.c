/*
 * Implementation of log.h.  The level is the only state; it is an atomic so
 * that a reload may change it while other threads log.  Whether stderr is a
 * terminal is asked per line: a line is rare, and stderr may be redirected.
 */
#include "log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Atomic int log_max_level = LOG_LEVEL_INFO;

void log_set_level(enum log_level max_level)
{
	atomic_store(&log_max_level, (int)max_level);
}

static void log_vwrite(int level, int errnum, const char *fmt, va_list ap)
{
	char line[2048];
	int off, n, saved = errno;
	bool tty;

	if (level > atomic_load(&log_max_level))
		return;
	/* The "<N>" prefix is for journald (and any pipe that may lead to it); a person reads a terminal. */
	tty = isatty(STDERR_FILENO);
	errno = saved;   /* isatty sets ENOTTY; a %m in fmt, and the caller after, read errno */
	off = tty ? 0 : snprintf(line, sizeof(line), "<%d>", level);
	n = vsnprintf(line + off, sizeof(line) - (size_t)off, fmt, ap);
	if (n < 0)
		return;
	off += n;
	if ((size_t)off >= sizeof(line) - 2)
		off = (int)sizeof(line) - 2;
	if (errnum != 0) {
		char err[128], cause[160];
		/* GNU strerror_r (_GNU_SOURCE, configure.ac): the message is what it returns, not always err. */
		size_t len = (size_t)snprintf(cause, sizeof(cause), ": %s", strerror_r(errnum, err, sizeof(err)));
		size_t room = sizeof(line) - 2 - (size_t)off;
		if (len >= sizeof(cause))
			len = sizeof(cause) - 1;
		if (len > room)
			len = room;
		memcpy(line + off, cause, len);
		off += (int)len;
	}
	line[off++] = '\n';
	/* One write per line keeps concurrent lines whole. */
	ssize_t w = write(STDERR_FILENO, line, (size_t)off);
	(void)w;
	errno = saved;
}

#define LOG_BODY(level, errnum)                   \
	do {                                      \
		va_list ap;                       \
		va_start(ap, fmt);                \
		log_vwrite(level, errnum, fmt, ap); \
		va_end(ap);                       \
	} while (0)

void log_warn(const char *fmt, ...)
{
	int saved = errno;
	LOG_BODY(LOG_LEVEL_WARNING, saved);
	errno = saved;
}

void log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_WARNING, 0);
}

void log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_INFO, 0);
}

void log_debug(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_DEBUG, 0);
}

void log_err(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_ERR, 0);
}

void fatal(const char *fmt, ...)
{
	int saved = errno;
	LOG_BODY(LOG_LEVEL_ERR, saved);
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_ERR, 0);
	exit(1);
}
