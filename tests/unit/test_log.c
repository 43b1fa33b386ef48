/*
 * log.c: a line per message with its syslog priority prefix (none on a
 * terminal), and log_warn naming the cause from errno (log_warnx not),
 * errno left as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"

/* Runs fn with stderr sent to a temporary file; returns what it wrote. */
static char *captured(void (*fn)(void))
{
	static char buf[4096];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	assert_non_null(tmp);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	fn();
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return buf;
}

static int errno_after;

static void warn_enoent(void)
{
	errno = ENOENT;
	log_warn("store: cannot open %s", "/x/y.db");
	errno_after = errno;
}

static void warnx_enoent(void)
{
	errno = ENOENT;
	log_warnx("store: %d rows left", 3);
}

static void test_warn_names_errno(void **state)
{
	(void)state;
	assert_string_equal(captured(warn_enoent), "<4>store: cannot open /x/y.db: No such file or directory\n");
	assert_int_equal(errno_after, ENOENT);
}

static void test_warnx_has_no_cause(void **state)
{
	(void)state;
	assert_string_equal(captured(warnx_enoent), "<4>store: 3 rows left\n");
}

/* Runs fn with stderr on a pseudo-terminal; returns what it wrote, as the terminal got it. */
static char *on_terminal(void (*fn)(void))
{
	static char buf[4096];
	int master = posix_openpt(O_RDWR | O_NOCTTY), slave, saved = dup(STDERR_FILENO);
	ssize_t n;

	assert_true(master >= 0 && saved >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	assert_true(dup2(slave, STDERR_FILENO) >= 0);
	fn();
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	n = read(master, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	close(slave);
	close(master);
	return buf;
}

static void info_started(void)
{
	errno = ENOENT;
	log_info("dlprofd %s started", "0.1");
	errno_after = errno;
}

static void test_terminal_has_no_prefix(void **state)
{
	(void)state;
	/* The terminal turns "\n" into "\r\n". */
	assert_string_equal(on_terminal(warn_enoent), "store: cannot open /x/y.db: No such file or directory\r\n");
	assert_string_equal(on_terminal(info_started), "dlprofd 0.1 started\r\n");
	assert_int_equal(errno_after, ENOENT);
}

static void test_pipe_keeps_errno(void **state)
{
	(void)state;
	assert_string_equal(captured(info_started), "<6>dlprofd 0.1 started\n");
	assert_int_equal(errno_after, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_warn_names_errno),
		cmocka_unit_test(test_warnx_has_no_cause),
		cmocka_unit_test(test_terminal_has_no_prefix),
		cmocka_unit_test(test_pipe_keeps_errno),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
