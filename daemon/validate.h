/*
 * Validation of what jobs send: registrations and ingest batches.  Pure
 * functions over parsed JSON; each failure names the first bad field in a
 * message meant for the person who wrote the request.
 */
#ifndef DLPROF_VALIDATE_H
#define DLPROF_VALIDATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "store.h"

#define VALIDATE_NAME_MAX 64
#define VALIDATE_WORKLOAD_MAX 128
#define VALIDATE_RANKS_MAX 65536   /* ranks of one job */
#define VALIDATE_NODE_MAX 127      /* a node's host name */

struct ingest_limits {
	size_t max_samples;
	double oldest;   /* earliest accepted timestamp (unix s) */
	double newest;   /* latest accepted */
};

/* A validated batch: samples point into the JSON body, which must outlive it. */
struct ingest_batch {
	struct sample *samples;
	size_t n;
	const json_t *config;   /* the config the job reports, or NULL */
	const char *stream;     /* the sender's stream name; "" when none (points into the body) */
	int64_t seq;            /* the batch's number in its stream, > 0; 0: not numbered */
	int rank;               /* the sending rank of a distributed job; -1: none */
};

/* [a-z0-9_.]{1,64} */
bool validate_metric_name(const char *name);
/* Printable text without control characters, 1..max bytes. */
bool validate_label(const char *s, size_t max);

/* Returns 0 and fills out, or -1 with err set; nothing allocated on failure. */
int validate_ingest(const json_t *body, int64_t job_id, const struct ingest_limits *lim,
		    struct ingest_batch *out, char *err, size_t errlen);
void ingest_batch_free(struct ingest_batch *b);

/*
 * Checks a registration body and fills spec with pointers into body (and
 * params_canon, a canonical JSON text the caller frees).  Returns 0 or -1
 * with err set.
 */
int validate_registration(const json_t *body, struct job_spec *spec, char **params_canon,
			  char **knobs_json, char *err, size_t errlen);

/*
 * The "rank" object of a registration (a rank of a distributed job joining
 * it): 1 with out filled (node pointing into body, NULL when not given), 0
 * when there is none, -1 with err set.  It needs the job's shared
 * external_id beside it.
 */
int validate_rank(const json_t *body, struct job_rank_spec *out, char *err, size_t errlen);

#endif
