/*
 * The tuner's rows in the store: completed trials, the knobs each workload's
 * jobs declared, and per phase whether a confident best was reached and
 * when a drift was seen.  Writes name the job (its workload follows from
 * the jobs table); the tuner reads everything back once at start.
 */
#ifndef DLPROF_STORE_TUNER_H
#define DLPROF_STORE_TUNER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

struct store_trial {
	int64_t job_id;
	const char *phase;         /* "" for the whole job */
	const char *config_json;
	const char *objective;
	long n;                    /* measured steps */
	double mean;
	double m2;                 /* sum of squared deviations: var of the mean = m2 / (n - 1) / n */
	double t_start, t_end;     /* the samples' own times */
};

/* Stores a completed trial of a job; returns when committed. */
int store_trial_add(struct store *st, const struct store_trial *tr);
/* Records the knobs the job's workload was declared with (NULL: none). */
int store_tuner_declared_save(struct store *st, int64_t job_id, const char *objective, const char *declared_json);
/* Records what objective=goodput measured of the job's workload (tuner_goodput_state's JSON text). */
int store_tuner_goodput_save(struct store *st, int64_t job_id, const char *objective, const char *state_json);
/* Records a phase's state for the job's workload. */
int store_tuner_phase_save(struct store *st, int64_t job_id, const char *objective, const char *phase,
			   bool settled, double drift_t);

/*
 * Everything learned on this hardware class, as
 * {"pools":[{workload_id,name,params,phase,config,objective,stale,trials,steps,sum,sumsq,sum_var}],
 *  "workloads":[{workload_id,name,params,objective,declared,goodput}],
 *  "phases":[{workload_id,objective,phase,settled,drift_t}],
 *  "jobs":[{workload_id,objective,jobs}]}.
 * A pool is the trials of one config in one phase, before its drift
 * (stale) or since: their count, steps, and the sums of their means, of
 * the squared means and of the variances of their means (config is text).
 */
int store_tuner_load(struct store *st, const char *hw_class, json_t **out);

/*
 * What the tuner needs about a job it did not see start (after a restart):
 * {"workload_id","name","params","objective","knobs","config","running"}.
 */
int store_tuner_job(struct store *st, int64_t job_id, json_t **out);

#endif
