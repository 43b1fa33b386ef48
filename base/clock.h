/*
 * Wall-clock and monotonic time in seconds, as doubles: the unit every
 * sample, trial and API field uses.
 */
#ifndef DLPROF_CLOCK_H
#define DLPROF_CLOCK_H

#include <time.h>

static inline double clock_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double clock_mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
