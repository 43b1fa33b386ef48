/*
 * The names of the figures jobs report that the daemon acts on
 * (reported.h): the one table.
 */
#include <assert.h>

#include "config.h"
#include "reported.h"

static const struct config_enum names[] = {
	{"samples_per_s", REPORTED_SAMPLES_PER_S},
	{"step_time_s", REPORTED_STEP_TIME_S},
	{"phase_time_s", REPORTED_PHASE_TIME_S},
	{"comm_wait_s", REPORTED_COMM_WAIT_S},
	{"global_batch", REPORTED_GLOBAL_BATCH},
	{"grad_batch_small", REPORTED_GRAD_BATCH_SMALL},
	{"grad_sqnorm_small", REPORTED_GRAD_SQNORM_SMALL},
	{"grad_batch_large", REPORTED_GRAD_BATCH_LARGE},
	{"grad_sqnorm_large", REPORTED_GRAD_SQNORM_LARGE},
	{NULL, 0},
};

enum reported reported_of(const char *name)
{
	int v = config_enum_value(names, name);

	return v < 0 ? REPORTED_OTHER : (enum reported)v;
}

const char *reported_name(enum reported r)
{
	assert(r >= REPORTED_OTHER && r < REPORTED_COUNT);
	return config_enum_name(names, (int)r);
}
