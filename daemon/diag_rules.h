/*
 * The job diagnosis: what holds a job back, in plain words.  Pure: a
 * function from a job's figures, window by window, and the thresholds to
 * a list of verdicts, each with the span it held, the figures it rests on
 * and a hint a person can act on.  No I/O, no lock, no clock: the report
 * handler (api_report.c) reads the windows from the store and prices the
 * fixes with the tuner; the unit tests feed constructed windows.
 *
 * A figure that was not measured is NAN, and a rule that needs it does not
 * fire: counter-based verdicts are never guessed without a PMU, the report
 * names the counter that would decide instead (diag_undecided).
 */
#ifndef DLPROF_DIAG_RULES_H
#define DLPROF_DIAG_RULES_H

#include <stdbool.h>
#include <stddef.h>

/* The thresholds, from the configuration (config.c documents each default). */
struct diag_thresholds {
	double sustain_s;          /* a verdict needs its condition this long to start, and its absence to end */
	double underuse_share;     /* CPU used below this share of the allowed CPUs */
	double gpu_idle_percent;   /* GPU utilisation below this is idle */
	double oversub_ratio;      /* runnable threads above this many times the allowed CPUs */
	double input_share;        /* data phases' share of the step at or above this */
	double comm_share;         /* communication phases' share */
	double checkpoint_share;   /* checkpoint phases' share */
	double mtbf_s;             /* mean time between failures for Young/Daly; 0: not configured */
	double memory_share;       /* RSS at or above this share of the memory limit */
	double major_faults_per_s; /* major faults at or above this rate */
	double imbalance_ratio;    /* busiest thread over the mean busy thread at or above this */
	double ipc_low;            /* memory-bound: IPC below this ... */
	double llc_mpki;           /* ... and LLC misses per 1000 instructions at or above this */
	double ipc_high;           /* compute-bound: IPC at or above this with misses below llc_mpki */
	double peak_flops;         /* the node's measured peak FLOP/s; 0: not measured */
	double peak_bandwidth;     /* the node's measured peak memory bytes/s; 0: not measured */
};

/* The figures of one window of a job; NAN where not measured. */
struct diag_window {
	double t0, t1;             /* unix seconds */
	double cpu_cores;          /* CPU used, in cores */
	double wait_cores;         /* runnable but waiting for a CPU, in cores */
	double switches_per_s;
	double threads, busy_threads, processes;
	double thread_max_cores;   /* the busiest thread */
	double busy_thread_cores;  /* the busy threads' CPU, summed */
	double allowed_cpus;       /* affinity, cpuset and quota, the smallest */
	double rss_bytes, mem_limit_bytes, major_faults_per_s;
	double gpus, gpu_util_percent;  /* summed over the job's GPUs */
	double step_s;             /* step time reported in the window (sum) */
	double data_s, comm_s, checkpoint_s;  /* time in phases of each class (sums) */
	double checkpoints;        /* checkpoint phase reports in the window */
	double ipc, instructions_per_s, llc_misses_per_s;
	double flops, bandwidth;   /* FLOP/s and memory bytes/s where counted */
};

/* Sets every figure of w to NAN and its span to [t0, t1]. */
void diag_window_clear(struct diag_window *w, double t0, double t1);

enum diag_kind {
	DIAG_UNDERUSE,
	DIAG_GPU_IDLE,
	DIAG_OVERSUBSCRIBED,
	DIAG_INPUT_BOUND,
	DIAG_MEMORY_PRESSURE,
	DIAG_IMBALANCED,
	DIAG_COMM_BOUND,
	DIAG_CHECKPOINT,
	DIAG_MEMORY_BOUND,
	DIAG_COMPUTE_BOUND,
	DIAG_NKINDS
};

/* The kind's name in answers and Prometheus labels ("oversubscribed"). */
const char *diag_kind_name(enum diag_kind k);

/* The class of a phase name the job reported: data, communication or checkpoint. */
enum diag_phase_class { DIAG_PHASE_OTHER, DIAG_PHASE_DATA, DIAG_PHASE_COMM, DIAG_PHASE_CHECKPOINT };
enum diag_phase_class diag_phase_class(const char *phase);

#define DIAG_MAX_EVIDENCE 8
struct diag_figure {
	const char *name;          /* static */
	double value;
};

struct diag_verdict {
	enum diag_kind kind;
	double since, until;       /* the span it held */
	bool active;               /* still holds at the last window */
	struct diag_figure evidence[DIAG_MAX_EVIDENCE];  /* means over the span */
	size_t nevidence;
	char hint[320];
};

/* The mean of verdict v's evidence figure name, NAN when it has none. */
double diag_evidence(const struct diag_verdict *v, const char *name);

/*
 * Evaluates windows w[0..n) (ascending, contiguous) under th into out
 * (room for max verdicts, in order of start).  Each kind's condition must
 * hold for sustain_s before it becomes a verdict, and fail for sustain_s
 * before the verdict ends.  Returns the number of verdicts.
 */
size_t diag_evaluate(const struct diag_window *w, size_t n, const struct diag_thresholds *th,
		     struct diag_verdict *out, size_t max);

/*
 * Whether the compute- vs memory-bound question was left open for want of
 * counters over w[0..n): fills why with the counters that would decide it
 * and returns true.
 */
bool diag_undecided(const struct diag_window *w, size_t n, char *why, size_t len);

#endif
