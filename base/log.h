/*
 * Logging to stderr with syslog priority prefixes ("<3>" ...), so that
 * journald keeps each line's level; on a terminal, where a person reads
 * them, without.  Modelled on OpenBSD daemons' log.c: log_warn() appends
 * strerror(errno), log_warnx() does not; errno is left as it was.
 * Thread-safe: each line is formatted into one buffer and written with one
 * write(2).
 */
#ifndef DLPROF_LOG_H
#define DLPROF_LOG_H

#include <stdarg.h>

enum log_level { LOG_LEVEL_ERR = 3, LOG_LEVEL_WARNING = 4, LOG_LEVEL_INFO = 6, LOG_LEVEL_DEBUG = 7 };

/* Lines above max_level are dropped.  Called once at start and on reload. */
void log_set_level(enum log_level max_level);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
