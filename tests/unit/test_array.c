/*
 * array_grow: room for what is asked, doubling from 16, the block kept when
 * it has room, and nothing changed when the size would overflow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"

static void grows_by_doubling(void **state)
{
	size_t cap = 0, n;
	int *v = NULL, *nv;

	(void)state;
	for (n = 0; n < 1000; n++) {
		nv = array_grow(v, &cap, n + 1, sizeof(*v));
		assert_non_null(nv);
		v = nv;
		v[n] = (int)n;   /* ASan: the room is really there */
		assert_true(cap >= n + 1 && cap < 2 * (n + 1) + 16);
		assert_true((cap & (cap - 1)) == 0 && cap >= 16);
	}
	for (n = 0; n < 1000; n++)
		assert_int_equal(v[n], (int)n);
	free(v);
}

static void keeps_a_block_with_room(void **state)
{
	size_t cap = 0;
	char *p = array_grow(NULL, &cap, 5, 1), *q;

	(void)state;
	assert_non_null(p);
	assert_int_equal(cap, 16);
	q = array_grow(p, &cap, 16, 1);
	assert_ptr_equal(q, p);
	assert_int_equal(cap, 16);
	q = array_grow(p, &cap, 100, 1);
	assert_non_null(q);
	assert_int_equal(cap, 128);
	free(q);
}

static void overflow_changes_nothing(void **state)
{
	size_t cap = 16;
	char *p = malloc(16);

	(void)state;
	assert_non_null(p);
	assert_null(array_grow(p, &cap, SIZE_MAX / 2, 4));
	assert_int_equal(cap, 16);
	assert_null(array_grow(p, &cap, SIZE_MAX, 1));
	assert_int_equal(cap, 16);
	free(p);   /* still the caller's */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grows_by_doubling),
		cmocka_unit_test(keeps_a_block_with_room),
		cmocka_unit_test(overflow_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
