/*
 * The collector tests' one lookup of what a sampling call emitted: the
 * value named name for job (0: the node), or NAN when it was not emitted.
 */
#ifndef DLPROF_COLLECTOR_VALUES_H
#define DLPROF_COLLECTOR_VALUES_H

#include <stdint.h>

#include "collector.h"

static inline double
collector_value_of(const struct collector_out *out, int64_t job, const char *name)
{
	return collector_value_find(out->v, out->n, job, name);
}

#endif
