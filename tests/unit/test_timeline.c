/*
 * A job's story (timeline.c) from hand-made store answers: its start, the
 * configs it ran and why with the knobs that changed, per-phase overrides
 * set, changed and cleared, verdicts raised and cleared, ranks joined and
 * left, its end with its status, in time order; the configs of a job with
 * no stored config events come from its whole-job trials.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "timeline.h"

static json_t *load(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, 0, &err);

	if (!v)
		fail_msg("bad test JSON: %s", err.text);
	return v;
}

static const char *field(const json_t *ev, const char *key)
{
	return json_string_value(json_object_get(ev, key));
}

/* The kinds of the events, space-separated, for one comparison of the order. */
static void kinds(const json_t *events, char *buf, size_t len)
{
	const json_t *e;
	size_t i, o = 0;

	buf[0] = '\0';
	json_array_foreach((json_t *)events, i, e)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "", field(e, "kind"));
}

static void a_whole_life_in_order(void **state)
{
	json_t *job = load("{\"started\":100,\"ended\":200,\"exit_status\":3,\"source\":\"slurm\",\"pid\":42,"
			   "\"external_id\":\"slurm:7\",\"trials\":[],\"ranks\":["
			   "{\"rank\":0,\"node\":\"n1\",\"joined\":101},{\"rank\":1,\"node\":\"n2\",\"joined\":102},"
			   "{\"rank\":2,\"node\":\"n3\",\"joined\":null}]}");
	json_t *events = load("[{\"t\":100,\"kind\":\"config\",\"detail\":{\"config\":{\"intra_threads\":2,"
			      "\"interop_threads\":1},\"why\":\"exploring\"}},"
			      "{\"t\":120,\"kind\":\"config\",\"detail\":{\"config\":{\"intra_threads\":4,"
			      "\"interop_threads\":1},\"why\":\"drift\"}},"
			      "{\"t\":130,\"kind\":\"config\",\"detail\":{\"config\":{\"intra_threads\":4,"
			      "\"interop_threads\":1,\"phases\":{\"data\":{\"intra_threads\":1}}},\"why\":\"best\"}},"
			      "{\"t\":140,\"kind\":\"config\",\"detail\":{\"config\":{\"intra_threads\":4,"
			      "\"interop_threads\":1},\"why\":\"settled\"}},"
			      "{\"t\":150,\"kind\":\"rank_left\",\"detail\":{\"rank\":1,\"exit_status\":3}}]");
	json_t *verdicts =
		load("[{\"kind\":\"input_bound\",\"since\":110,\"until\":160,\"hint\":\"data takes 70%\"},"
		     "{\"kind\":\"straggler\",\"rank\":1,\"since\":100,\"until\":null,\"hint\":\"rank 1 is slow\"}]");
	json_t *tl = timeline_events(job, events, verdicts), *e;
	char order[512];

	(void)state;
	assert_non_null(tl);
	kinds(tl, order, sizeof(order));
	assert_string_equal(order, "started config verdict_raised rank_joined rank_joined verdict_raised config "
				   "phase_override phase_override rank_left verdict_cleared ended");
	e = json_array_get(tl, 0);
	assert_string_equal(field(e, "text"), "started (slurm, pid 42, slurm:7)");
	e = json_array_get(tl, 1);
	assert_string_equal(field(e, "why"), "exploring");
	assert_string_equal(field(e, "text"),
			    "config interop_threads=1 intra_threads=2 (exploring: the tuner measures it)");
	assert_null(json_object_get(e, "changed"));
	e = json_array_get(tl, 2);
	assert_string_equal(field(e, "verdict"), "straggler");
	assert_int_equal(json_integer_value(json_object_get(e, "rank")), 1);
	e = json_array_get(tl, 6);
	assert_string_equal(field(e, "text"),
			    "config intra_threads 2 -> 4 (exploring again: the best stopped giving what it did)");
	assert_int_equal(
		json_integer_value(json_array_get(json_object_get(json_object_get(e, "changed"), "intra_threads"), 1)),
		4);
	/* Only a phase's settings changed at 130: an override, no config event. */
	e = json_array_get(tl, 7);
	assert_true(json_number_value(json_object_get(e, "t")) == 130);
	assert_string_equal(field(e, "phase"), "data");
	assert_string_equal(field(e, "text"), "phase data runs intra_threads=1 (the best measured so far)");
	e = json_array_get(tl, 8);
	assert_true(json_is_null(json_object_get(e, "config")));
	assert_string_equal(field(e, "text"), "phase data runs the whole job's config again (settled: the best, the "
					      "search over)");
	assert_string_equal(field(json_array_get(tl, 9), "text"), "rank 1 left, exit status 3");
	assert_string_equal(field(json_array_get(tl, 10), "text"), "input_bound cleared");
	assert_string_equal(field(json_array_get(tl, 11), "text"), "ended, exit status 3");
	json_decref(tl);
	json_decref(job);
	json_decref(events);
	json_decref(verdicts);
}

/* No config events (an older database): the whole-job trials give the configs, why unknown. */
static void configs_from_trials_without_events(void **state)
{
	json_t *job = load("{\"started\":100,\"ended\":null,\"source\":\"registered\",\"pid\":null,\"trials\":["
			   "{\"phase\":\"\",\"config\":{\"intra_threads\":2},\"t_start\":101},"
			   "{\"phase\":\"data\",\"config\":{\"intra_threads\":8},\"t_start\":102},"
			   "{\"phase\":\"\",\"config\":{\"intra_threads\":2},\"t_start\":103},"
			   "{\"phase\":\"\",\"config\":{\"intra_threads\":4},\"t_start\":104}]}");
	json_t *events = load("[]");
	json_t *tl = timeline_events(job, events, NULL);
	char order[256];

	(void)state;
	kinds(tl, order, sizeof(order));
	assert_string_equal(order, "started config config");
	assert_string_equal(field(json_array_get(tl, 0), "text"), "started (registered)");
	assert_true(json_is_null(json_object_get(json_array_get(tl, 1), "why")) ||
		    !json_object_get(json_array_get(tl, 1), "why"));
	assert_string_equal(field(json_array_get(tl, 2), "text"), "config intra_threads 2 -> 4");
	json_decref(tl);
	json_decref(job);
	json_decref(events);
}

/* A config event at the very time the job started comes after the start; the end is last. */
static void start_first_end_last(void **state)
{
	json_t *job = load("{\"started\":100,\"ended\":100,\"exit_status\":null,\"source\":\"registered\"}");
	json_t *events = load("[{\"t\":100,\"kind\":\"config\",\"detail\":{\"config\":{\"gpus\":1},\"why\":null}}]");
	json_t *tl = timeline_events(job, events, NULL);
	char order[256];

	(void)state;
	kinds(tl, order, sizeof(order));
	assert_string_equal(order, "started config ended");
	assert_string_equal(field(json_array_get(tl, 2), "text"), "ended (exit status not reported)");
	json_decref(tl);
	json_decref(job);
	json_decref(events);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_whole_life_in_order),
		cmocka_unit_test(configs_from_trials_without_events),
		cmocka_unit_test(start_first_end_last),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
