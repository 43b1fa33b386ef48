/*
 * Text forms of the JSON values dlprofctl prints: scalars, configs
 * ("intra_threads=4 interop_threads=2 lstm:intra_threads=2"), timestamps,
 * and the list a daemon answer carries (a bare array or {"jobs": [...]}).
 */
#ifndef DLPROF_CTL_FORMAT_H
#define DLPROF_CTL_FORMAT_H

#include <jansson.h>
#include <stddef.h>

/* A scalar as text into buf ("-" for null or absent); returns buf. */
const char *ctl_fmt_scalar(const json_t *v, char *buf, size_t len);
/* An object as space-separated key=value; nested objects (phases) as
 * name:key=value.  Returns buf; truncated text ends in "...". */
const char *ctl_fmt_object(const json_t *obj, char *buf, size_t len);
/* A unix time as local "YYYY-MM-DD HH:MM:SS"; "-" for null. */
const char *ctl_fmt_time(const json_t *v, char *buf, size_t len);
/* The array an answer carries: the value itself, or its member key. */
json_t *ctl_list(json_t *answer, const char *key);
/* The first of several member names present in obj, or NULL. */
json_t *ctl_get_any(const json_t *obj, const char *const *names);
/* Prints "name  value" aligned on a column of the given width. */
void ctl_print_field(const char *name, const char *value, int width);

#endif
