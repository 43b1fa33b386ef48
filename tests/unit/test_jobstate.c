/*
 * Tests of the collectors' per-job state table: a job's state is created
 * zeroed and set up once, then found again, dropping a job clears and frees only its
 * state, and freeing the table clears every state once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "jobstate.h"

struct test_state {
	double value;
	int *buf;                /* something the clear callback must free */
};

static int test_cleared, test_inited;

/* Sees a zeroed state and leaves a mark on it. */
static void
test_init(void *state)
{
	struct test_state *s = state;

	if (s->value == 0 && s->buf == NULL)
		s->value = 0.25;
	test_inited++;
}

static void
test_clear(void *state)
{
	struct test_state *s = state;

	free(s->buf);
	test_cleared++;
}

static void
get_creates_once(void **state)
{
	struct jobstate_table t;
	struct test_state *a, *b, *again;

	(void)state;
	test_cleared = test_inited = 0;
	jobstate_init(&t, sizeof(struct test_state), test_init, test_clear);
	a = jobstate_get(&t, 7);
	assert_non_null(a);
	assert_true(a->value == 0.25 && a->buf == NULL);
	assert_int_equal((uintptr_t)a % _Alignof(max_align_t), 0);
	a->value = 1.5;
	b = jobstate_get(&t, 8);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	again = jobstate_get(&t, 7);
	assert_ptr_equal(again, a);
	assert_true(again->value == 1.5);
	assert_int_equal(test_inited, 2);
	jobstate_free_all(&t);
	assert_int_equal(test_cleared, 2);
}

static void
drop_frees_only_that_job(void **state)
{
	struct jobstate_table t;
	struct test_state *a, *b;

	(void)state;
	test_cleared = 0;
	jobstate_init(&t, sizeof(struct test_state), NULL, test_clear);
	a = jobstate_get(&t, 1);
	b = jobstate_get(&t, 2);
	assert_non_null(a);
	assert_non_null(b);
	a->buf = malloc(16);
	b->value = 2;
	jobstate_drop(&t, 1);
	assert_int_equal(test_cleared, 1);
	jobstate_drop(&t, 99);   /* unknown: nothing happens */
	assert_int_equal(test_cleared, 1);
	assert_ptr_equal(jobstate_get(&t, 2), b);
	assert_true(b->value == 2);
	a = jobstate_get(&t, 1);  /* back after a drop: a fresh, zeroed state */
	assert_non_null(a);
	assert_null(a->buf);
	jobstate_free_all(&t);
	assert_int_equal(test_cleared, 3);
	assert_null(t.head);
	jobstate_free_all(&t);   /* an empty table stays empty */
	assert_int_equal(test_cleared, 3);
}

static void
no_callbacks(void **state)
{
	struct jobstate_table t;

	(void)state;
	jobstate_init(&t, sizeof(int), NULL, NULL);
	assert_non_null(jobstate_get(&t, 3));
	jobstate_drop(&t, 3);
	assert_non_null(jobstate_get(&t, 4));
	jobstate_free_all(&t);
	assert_null(t.head);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(get_creates_once),
		cmocka_unit_test(drop_frees_only_that_job),
		cmocka_unit_test(no_callbacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
