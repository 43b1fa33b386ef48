/*
 * The one interface every data source implements.  A collector is one file
 * exposing one `const struct collector`: init probes whether the source can
 * work on this machine and returns the collector's own context (or NULL with
 * a reason a person can act on), sample_node and sample_job read the source
 * and emit samples into an out-buffer, job_gone forgets a job's state, fini
 * frees the context.  The sampler (daemon/sampler.c) owns the contexts and
 * calls every function from its one thread, so collectors need no locks.
 *
 * The interface carries a version: a collector built against another
 * version is refused by the sampler with a clear reason.
 */
#ifndef DLPROF_COLLECTOR_H
#define DLPROF_COLLECTOR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>


#define COLLECTOR_VERSION 2

/* What a sampling call says about the collector as a whole. */
enum collector_result {
	COLLECTOR_OK = 0,            /* sampled (a job whose processes vanished is still ok) */
	COLLECTOR_TRANSIENT = -1,    /* failed this time: back off and retry */
	COLLECTOR_UNSUPPORTED = -2,  /* cannot work any more: reinitialise later */
};

/* Where collectors read from; fixture trees in tests. */
struct collector_env {
	const char *proc_root;       /* "/proc" */
	const char *sys_root;        /* "/sys" */
	const char *nvml_library;    /* NULL: "libnvidia-ml.so.1" */
	double interval_s;           /* nominal sampling period */
};

/* One job as the sampler sees it in one tick. */
struct collector_job {
	int64_t id;                  /* the store's job id (> 0) */
	const pid_t *pids;           /* its processes, ascending */
	size_t npids;
	const char *cgroup;          /* its cgroup path relative to the hierarchy root, or NULL */
	int cgroup_version;          /* 1 or 2, when cgroup is set */
};

/* One emitted value; the name is copied into the buffer. */
struct collector_value {
	int64_t job_id;              /* 0: the node */
	double t;                    /* unix seconds */
	double value;
	char name[65];               /* [a-z0-9_.]{1,64} */
};

/*
 * What a series is, in words, for views: the name of the thread that a
 * per-thread series measures.  key is the series' name up to its last
 * part ("thread.PID.TID"); text is printable ASCII.  Emitted when a
 * collector first sees what it names, and again when that changes.
 */
struct collector_label {
	int64_t job_id;              /* 0: the node */
	char key[65];                /* [a-z0-9_.]{1,64} */
	char text[65];
};

/* A growing buffer of values for one tick; collectors only append. */
struct collector_out {
	struct collector_value *v;
	size_t n;
	size_t cap;
	struct collector_label *labels;  /* this tick's labels (collector_put_label) */
	size_t nlabels;
	size_t labels_cap;
	double t;                    /* the tick's unix time, stamped on each value */
	double mono;                 /* the tick's CLOCK_MONOTONIC time, for rates */
	int failed;                  /* an allocation failed: values were dropped */
	/*
	 * This tick also reads what is costly per thread (per-thread CPU,
	 * counters): set by the sampler on the ticks that store, so those
	 * values span the whole store interval.  1 after collector_out_reset.
	 */
	int detail;
};

/*
 * Appends one value (name formatted printf-style).  Never fails visibly: on
 * allocation failure the value is dropped and out->failed set, so a full
 * memory does not take the collector down with it.
 */
void collector_put(struct collector_out *out, int64_t job_id, double value, const char *name_fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * Appends one label (see struct collector_label): text is copied, bytes
 * outside printable ASCII become '?' and what does not fit is cut.
 * Drops it and sets out->failed when memory runs out, as collector_put.
 */
void collector_put_label(struct collector_out *out, int64_t job_id, const char *key, const char *text);
/*
 * A measured value at its measurement's resolution: rounded to the coarsest
 * step of 1, 2 or 5 x 10^-d (0 <= d <= 6, never above 1) not above
 * quantum, the smallest change the measurement can show (a rate of integer
 * counts over elapsed seconds: 1 / (counts per unit x elapsed)).  It moves
 * the value by at most half of quantum, less than one count, so the count
 * it came from is still the value over quantum, rounded; what it drops is
 * the interval's noise, which made every rate a full-precision double the
 * store could not compress.  The value as it is when quantum is finer than
 * 10^-6, or either is not finite.
 */
double collector_resolved(double value, double quantum);
/*
 * A nanosecond clock's count (schedstat, perf task-clock) over elapsed
 * seconds, in cores, at the resolution the interval is known to: the
 * tick's clock is read once, before the collectors read their counters
 * one job after another, so where in the interval a count was taken is
 * known to some microseconds at best (tens on a node of many jobs).  The
 * quantum is COLLECTOR_CLOCK_QUANTUM_S over elapsed, and a millionth of a
 * core at the finest (a detail interval of 10 s would ask for 10^-7).  The
 * nanoseconds below are the interval's noise and cost the store a full
 * double a point (bench/RESULTS.md, history).
 */
#define COLLECTOR_CLOCK_QUANTUM_S 1e-5
double collector_clock_cores(double ns, double elapsed);
void collector_out_reset(struct collector_out *out, double t, double mono);
void collector_out_free(struct collector_out *out);
/* The value named name for job (0: the node) among v[0..n), or NAN when there is none. */
double collector_value_find(const struct collector_value *v, size_t n, int64_t job_id, const char *name);

struct collector {
	int version;                 /* COLLECTOR_VERSION */
	const char *name;            /* "proc", "perf", "papi", "likwid", "rapl", "nvml" */
	/*
	 * Probes the source.  Returns the context, or NULL with why filled in
	 * ("perf_event_paranoid is 3: grant CAP_PERFMON").  A context may come
	 * with a note in why (what works only in part); why is "" otherwise.
	 */
	void *(*init)(const struct collector_env *env, char *why, size_t why_len);
	/* Node-wide values (job_id 0); NULL when the source has none. */
	int (*sample_node)(void *ctx, struct collector_out *out, char *why, size_t why_len);
	/* Values for one job; NULL when the source has none per job. */
	int (*sample_job)(void *ctx, const struct collector_job *job, struct collector_out *out, char *why,
			  size_t why_len);
	/* The job left: free what the collector kept for it.  May be NULL. */
	void (*job_gone)(void *ctx, int64_t job_id);
	/* Extra description for /api/v1/node (a new JSON object), or NULL. */
	json_t *(*describe)(void *ctx);
	void (*fini)(void *ctx);
};

/*
 * The collectors built into this binary, ending with NULL.  Optional ones
 * are in the table only when configure found their library.
 */
extern const struct collector *const collector_registry[];

/* Every collector dlprofd knows, built in or not, ending with NULL. */
extern const char *const collector_known[];
/* Why a known collector is missing from this build ("built without PAPI ..."). */
const char *collector_missing_reason(const char *name);

extern const struct collector collector_proc;
extern const struct collector collector_perf;
extern const struct collector collector_papi;
extern const struct collector collector_likwid;
extern const struct collector collector_nvml;
extern const struct collector collector_rapl;

#endif
