/*
 * What a series is, in words (sql/017: series_labels): a per-thread series
 * thread.PID.TID.* is labelled with the thread's name, which the sampler
 * posts when it first sees the thread and when the name changes.  Same
 * conventions as store.h.
 */
#ifndef DLPROF_STORE_LABELS_H
#define DLPROF_STORE_LABELS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct store;

struct store_label {
	int64_t job_id;  /* 0: the node */
	const char *key; /* the series' name up to its last part: thread.PID.TID */
	const char *label;
	double t; /* when it was seen */
};

/* Queues a copy of the labels and returns at once (the sampler's path); STORE_EBUSY when the queue is full. */
int store_labels_post(struct store *st, const struct store_label *v, size_t n);

/* The labels of job_id whose key starts with prefix, as a new JSON object key -> label in *out. */
int store_labels(struct store *st, int64_t job_id, const char *prefix, json_t **out);

#endif
