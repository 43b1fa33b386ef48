/*
 * dlprofctl export: a job's whole record as the dashboard downloads it
 * (GET /api/v1/jobs/{id}/record: its view, report, timeline and every
 * series in buckets of a step), as JSON or, with --csv, its series as
 * CSV, written to standard output or a file.  This file builds the
 * request from the command line's times and writes the answer; the
 * request itself goes through dlprofctl.c like every command's.
 */
#ifndef DLPROF_CTL_EXPORT_H
#define DLPROF_CTL_EXPORT_H

#include <stddef.h>
#include <time.h>

struct ctl_export_opts {
	const char *from, *to;   /* unix seconds, -N[smhd] before now, or YYYY-MM-DDTHH:MM[:SS]Z; NULL: the job's life */
	const char *step;        /* seconds a point; NULL: the daemon's (its life over 1,000) */
	int csv;                 /* the series as CSV instead of the whole record as JSON */
	const char *output;      /* a file; NULL or "-": standard output */
};

/*
 * A time as the options give it, as unix seconds (now: the current time,
 * for relative ones); -1 when it is none of the forms.
 */
int ctl_export_time(const char *text, time_t now, double *out);

/*
 * The request path for job id, into buf (len bytes); -1 with why filled
 * when a time or the step is malformed, or from is after to.
 */
int ctl_export_path(long long id, const struct ctl_export_opts *o, time_t now, char *buf, size_t len, char *why,
		    size_t why_len);

/* Writes the answer body to o->output (replacing it) or standard output; -1 with why filled. */
int ctl_export_write(const struct ctl_export_opts *o, const char *body, size_t len, char *why, size_t why_len);

#endif
