/*
 * The figures a job reports that the daemon acts on (client/README.md and
 * docs/API.md name them for jobs), in one name table: the tuner, the ranks'
 * summaries, the diagnosis and the views compare a sample's id, never its
 * text.  Any other name is stored and shown, not acted on.  Pure.
 */
#ifndef DLPROF_REPORTED_H
#define DLPROF_REPORTED_H

enum reported {
	REPORTED_OTHER,             /* a name the daemon has no rule for */
	REPORTED_SAMPLES_PER_S,     /* "samples_per_s": the job's throughput */
	REPORTED_STEP_TIME_S,       /* "step_time_s": one step's seconds */
	REPORTED_PHASE_TIME_S,      /* "phase_time_s": a phase's seconds in a step (the sample's phase names it) */
	REPORTED_COMM_WAIT_S,       /* "comm_wait_s": a rank's wait in collectives in a step */
	REPORTED_GLOBAL_BATCH,      /* "global_batch": samples per optimizer step, all ranks */
	REPORTED_GRAD_BATCH_SMALL,  /* "grad_batch_small": the batch of the local gradient ... */
	REPORTED_GRAD_SQNORM_SMALL, /* "grad_sqnorm_small": ... and its squared norm */
	REPORTED_GRAD_BATCH_LARGE,  /* "grad_batch_large": the batch of the all-reduced gradient ... */
	REPORTED_GRAD_SQNORM_LARGE, /* "grad_sqnorm_large": ... and its squared norm */
	REPORTED_COUNT,
};

/* The id of a sample's name (REPORTED_OTHER for any other name or NULL), and back (NULL for REPORTED_OTHER). */
enum reported reported_of(const char *name);
const char *reported_name(enum reported r);

#endif
