/*
 * log.c: a line per message with its syslog priority prefix, and log_warn
 * naming the cause from errno (log_warnx not), errno left as it was.
 */
#include <errno.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_warn_names_errno),
		cmocka_unit_test(test_warnx_has_no_cause),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
