/*
 * Knob spaces: which knobs a workload is tuned over, the values each may take
 * on this node, and the candidates (every combination of values) the tuner
 * ranks.  A space is built from the node's topology (threads up to the CPUs a
 * job may use, GPUs up to those free) and from the knobs a job declares; a
 * job's own limits then narrow it further through a filter, so that no
 * proposal can be a config that cannot run.  Pure: no I/O and no lock; the
 * benchmark links it directly.
 */
#ifndef DLPROF_KNOBS_H
#define DLPROF_KNOBS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define KNOB_MAX 8                 /* knobs in one space */
#define KNOB_MAX_VALUES 32         /* values of one knob (a filter is a 32-bit mask) */
#define KNOB_NAME_MAX 32
#define KNOB_STR_MAX 24
#define SPACE_MAX_CANDIDATES 4096
#define KNOB_FEATURES 24           /* model input dimensions of a space */

enum knob_type {
	KNOB_INT,   /* ordered integers; the model sees log2(v + offset) */
	KNOB_CAT,   /* unordered strings; the model sees one coordinate per value */
};

/*
 * The knobs the daemon knows by name: its rules (priors, the topology's
 * limits, the model's threads-in-flight coordinate) and the environment
 * mapping (knobs_env.c) act on them.  A declared knob of any other name is
 * KNOB_OTHER.  Names are text only where a space meets JSON: a knob's
 * name is turned into its id once, when the knob is added.
 */
enum knob_id {
	KNOB_OTHER,
	KNOB_INTRA_THREADS,        /* "intra_threads": intra-op threads (OMP_NUM_THREADS) */
	KNOB_INTEROP_THREADS,      /* "interop_threads" */
	KNOB_GPUS,                 /* "gpus": how many */
	KNOB_RANKS,                /* "ranks": processes of a job on the node, each with its own team */
	KNOB_AFFINITY,             /* "affinity": none|close|spread */
	KNOB_ALLOCATOR,            /* "allocator": default|jemalloc */
	KNOB_DATALOADER_WORKERS,   /* "dataloader_workers" */
	KNOB_BATCH_SIZE,           /* "batch_size" */
	KNOB_ID_COUNT,
};

/* The id of a knob's name (KNOB_OTHER for a name the daemon has no rule for), and back (NULL for KNOB_OTHER). */
enum knob_id knob_id_of(const char *name);
const char *knob_name(enum knob_id id);

struct knob {
	char name[KNOB_NAME_MAX];
	enum knob_id id;                       /* knob_id_of(name) */
	enum knob_type type;
	bool runtime;                          /* may change while a job runs */
	bool declared;                         /* a job declared it (its range is the job's own) */
	int nvalues;                           /* >= 1; one value means fixed, not tuned */
	long ivalues[KNOB_MAX_VALUES];         /* KNOB_INT: ascending */
	char svalues[KNOB_MAX_VALUES][KNOB_STR_MAX]; /* KNOB_CAT */
	int prior;                             /* index of the value the topology prior picks */
};

struct knob_space {
	int nknobs;
	struct knob knobs[KNOB_MAX];
	int ncand;                             /* product of the knobs' nvalues */
	int cpus;                              /* logical CPUs a job may use (the prior's cliff); 0: unknown */
	/*
	 * Inter-op threads run no intra-op team of their own (a job that never
	 * forks work onto them), so they add no threads in flight: one of the
	 * two hypotheses a learner weighs (tuner_learner.c).  false: each does.
	 */
	bool interop_idle;
};

/* A config as one value index per knob of a space. */
struct knob_config {
	int idx[KNOB_MAX];
};

/* Allowed values per knob (bit i: value index i). */
struct knob_filter {
	uint32_t allowed[KNOB_MAX];
	int layout_cpus;      /* > 0: ranks x intra_threads may not exceed it (knobs_filter_topology) */
};

/* What the topology prior and the node-derived ranges need to know. */
struct knob_topology {
	int cpus_allowed;     /* logical CPUs a job may run on */
	int cores_allowed;    /* physical cores among them */
	int numa_cores;       /* physical cores of the largest NUMA domain; 0: unknown */
	int gpus_total;       /* GPUs on the node */
	int gpus_free;        /* GPUs not given to running jobs */
	bool efficiency;      /* the objective is per allocated resource: the prior starts small */
};

/*
 * Builds the space for a workload: the built-in knobs with node-derived
 * ranges (intra_threads, interop_threads, gpus where the node has GPUs,
 * affinity and allocator fixed unless declared), replaced or extended by the
 * declared knobs object ({"name": {"min":..,"max":..} | {"values":[..]},
 * "runtime": bool}).  Returns 0, or -1 with a reason in err (a bad
 * declaration, too many knobs or candidates).
 */
int knobs_space_build(struct knob_space *sp, const struct knob_topology *topo, const json_t *declared,
		      char *err, size_t err_len);

/* Space <-> JSON: the declaration a space can be rebuilt from. */
json_t *knobs_space_json(const struct knob_space *sp);
int knobs_space_from_json(struct knob_space *sp, const json_t *j);

/* Candidate index <-> config (mixed radix over the knobs, first knob fastest). */
void knobs_decode(const struct knob_space *sp, int cand, struct knob_config *out);
int knobs_encode(const struct knob_space *sp, const struct knob_config *c);

/* The index of knob name, or -1. */
int knobs_find(const struct knob_space *sp, const char *name);
/* The index of the knob id (not KNOB_OTHER), or -1. */
int knobs_find_id(const struct knob_space *sp, enum knob_id id);
/* The index of an integer or string value of knob k, or -1. */
int knobs_value_index(const struct knob *k, const json_t *value);

/*
 * The candidate a JSON config denotes: knobs it lacks take the value of base
 * (a candidate index, or -1 for the prior); -1 when a value is not one of the
 * space's values.  Keys that are not knobs ("phases") are ignored.
 */
int knobs_candidate_of(const struct knob_space *sp, const json_t *config, int base);
/*
 * Maps every candidate of from onto to (map: from->ncand entries): the
 * knobs both have and only lists (ids ending in KNOB_OTHER; NULL: all) by value,
 * to's other knobs at their values in base (a candidate of to; -1: their
 * priors); -1 for a candidate with a value to lacks.
 */
void knobs_map(const struct knob_space *from, const struct knob_space *to, int base, const enum knob_id *only,
	       int *map);
/* A new JSON object {knob: value} for a candidate. */
json_t *knobs_config_json(const struct knob_space *sp, int cand);
/* A short stable text for a candidate, e.g. "intra_threads=4,interop_threads=1". */
void knobs_config_text(const struct knob_space *sp, int cand, char *buf, size_t len);
/* The integer value of knob id in cand, or dflt when the space lacks it. */
long knobs_int_value(const struct knob_space *sp, int cand, enum knob_id id, long dflt);

/* The candidate that every knob's prior value makes. */
int knobs_prior_candidate(const struct knob_space *sp);

/*
 * Model inputs of a candidate: log2 for integer knobs, one coordinate per
 * value for categorical ones.  Returns the number of dimensions.
 */
/* The model input of an integer knob's value v: log2 (of v + 1 when 0 is a value), else linear. */
double knobs_value_feature(const struct knob *k, long v);
int knobs_features(const struct knob_space *sp, int cand, double *x);

/*
 * The topology prior's expected objective of cand relative to the prior
 * candidate (1.0 there, a little less away from it): a weak shape that
 * orders the first trials, never a claim about the workload.
 */
double knobs_prior_shape(const struct knob_space *sp, int cand);
/*
 * Threads a candidate keeps busy: intra-op x inter-op threads x ranks (each
 * inter-op thread and each rank runs its own intra-op team).  Past the
 * space's CPUs (cpus) they are oversubscribed.
 */
long knobs_threads_in_flight(const struct knob_space *sp, int cand);

/* Every value allowed. */
void knobs_filter_all(const struct knob_space *sp, struct knob_filter *f);
/* Whether cand passes the filter. */
bool knobs_filter_pass(const struct knob_space *sp, const struct knob_filter *f, int cand);
/* Pins every non-runtime knob to its value in cand (a running job can change only runtime knobs). */
void knobs_filter_pin_static(const struct knob_space *sp, struct knob_filter *f, int cand);
/*
 * Narrows to what a job may run: threads within the CPUs it may use unless
 * it declared its own range, at most gpus_free GPUs, and where the space
 * has a `ranks` knob (ranks on this node: `dlprofctl run --ranks auto`)
 * layouts of ranks x intra_threads within those CPUs.  Returns -1 when a
 * knob had no value left (it is then held at its smallest value), else 0.
 */
int knobs_filter_topology(const struct knob_space *sp, struct knob_filter *f, const struct knob_topology *topo);

#endif
