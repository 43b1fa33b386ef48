/*
 * The collector tests' one lookup of what a sampling call emitted: the
 * value named name for job (0: the node), or NAN when it was not emitted.
 */
#ifndef DLPROF_COLLECTOR_VALUES_H
#define DLPROF_COLLECTOR_VALUES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "collector.h"

static inline double
collector_value_of(const struct collector_out *out, int64_t job, const char *name)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].job_id == job && strcmp(out->v[i].name, name) == 0)
			return out->v[i].value;
	return NAN;
}

#endif
