/*
 * The sampler thread: every interval it finds the jobs to sample (registered
 * ones and those discovered from Slurm cgroups and environments), runs the
 * available collectors over them and posts the samples to the store.  It owns
 * the collectors' contexts; other threads only read its published status.
 */
#ifndef DLPROF_SAMPLER_H
#define DLPROF_SAMPLER_H

#include <jansson.h>

struct app;
struct sampler;

struct sampler_options {
	double interval_s;        /* sampling period */
	const char *proc_root;    /* "/proc", or a fixture tree in tests */
	const char *sys_root;     /* "/sys" */
	double retention_days;    /* raw samples older than this are rolled up per minute */
};

/* Starts the thread; NULL after logging why. */
struct sampler *sampler_start(struct app *app, const struct sampler_options *opt);
/* Stops the thread and frees everything; NULL is fine. */
void sampler_stop(struct sampler *s);
/* Applies a new interval (SIGHUP). */
void sampler_set_interval(struct sampler *s, double interval_s);
/*
 * The collectors' status as a JSON array of {"name","status","reason"}:
 * status is "available" or "unavailable".  A new reference.
 */
json_t *sampler_collectors_json(struct sampler *s);

#endif
