/*
 * A small read-only JSON scanner for the SPANK plugin.  The plugin runs
 * inside slurmstepd and slurmd, next to whatever JSON library Slurm's own
 * plugins load (json-c exports json_object_get too), so it links no JSON
 * library and reads the few fields it needs from the daemon's answers with
 * this: values are views into the text, nothing is allocated.
 */
#ifndef DLPROF_SPANK_JSON_H
#define DLPROF_SPANK_JSON_H

#include <stddef.h>

/* One JSON value: the bytes [p, end) of the text it was found in. */
struct sj_value {
	const char *p;
	const char *end;
};

/* The whole text as one value; 0, or -1 when it is not valid JSON. */
int sj_parse(const char *text, struct sj_value *out);
/* The member key of an object; 0 when found, -1 when absent or not an object. */
int sj_get(const struct sj_value *obj, const char *key, struct sj_value *out);
/*
 * Iterates an array (key == NULL) or an object: *cursor starts NULL; each
 * call stores the next element (and for objects its key, unescaped into
 * key[keylen]) and returns 1, or 0 at the end, -1 on a malformed text.
 */
int sj_next(const struct sj_value *container, const char **cursor, char *key, size_t keylen,
	    struct sj_value *out);
/* An integer value; 0 or -1. */
int sj_int(const struct sj_value *v, long long *out);
/* A string (unescaped; \u escapes beyond ASCII become '?'), a number or a
 * boolean as text into buf; 0, or -1 for other types or when it does not fit. */
int sj_text(const struct sj_value *v, char *buf, size_t len);

#endif
