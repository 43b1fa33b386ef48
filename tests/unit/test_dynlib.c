/*
 * dynlib: the first loadable soname wins; required symbols must exist,
 * optional ones are bound to NULL when missing.  Uses libm, present
 * everywhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dlfcn.h>
#include <cmocka.h>

#include "dynlib.h"

struct mathlib {
	double (*cos)(double);
	double (*nothing)(double);
};

static const char *const names[] = {"libdoes-not-exist.so.9", "libm.so.6"};

static void test_first_loadable_name(void **state)
{
	const char *const none[] = {"libdoes-not-exist.so.9"};
	void *lib;

	(void)state;
	assert_null(dynlib_open(none, 1));
	lib = dynlib_open(names, 2);
	assert_non_null(lib);
	dlclose(lib);
}

static void test_bind_required_and_optional(void **state)
{
	const struct dynlib_symbol syms[] = {
		{offsetof(struct mathlib, cos), "cos", 1},
		{offsetof(struct mathlib, nothing), "dlprof_no_such_symbol", 0},
	};
	struct mathlib m = {0};
	void *lib = dynlib_open(names, 2);

	(void)state;
	assert_null(dynlib_bind(lib, syms, 2, &m));
	assert_non_null(m.cos);
	assert_true(m.cos(0.0) == 1.0);
	assert_null(m.nothing);
	dlclose(lib);
}

static void test_missing_required_is_named(void **state)
{
	const struct dynlib_symbol syms[] = {
		{offsetof(struct mathlib, cos), "cos", 1},
		{offsetof(struct mathlib, nothing), "dlprof_no_such_symbol", 1},
	};
	struct mathlib m = {0};
	void *lib = dynlib_open(names, 2);

	(void)state;
	assert_string_equal(dynlib_bind(lib, syms, 2, &m), "dlprof_no_such_symbol");
	dlclose(lib);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_loadable_name),
		cmocka_unit_test(test_bind_required_and_optional),
		cmocka_unit_test(test_missing_required_is_named),
	};
	return cmocka_run_group_tests_name("dynlib", tests, NULL, NULL);
}
