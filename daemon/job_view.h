/*
 * A job's view as GET /api/v1/jobs/{id} answers it, rendered once per
 * state of the store (job_view.c).
 */
#ifndef DLPROF_JOB_VIEW_H
#define DLPROF_JOB_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct app;
struct job_views;

struct job_views *job_views_new(void);
void job_views_free(struct job_views *v);
/* The views held now (for tests). */
size_t job_views_count(struct job_views *v);

/*
 * The view of job id as JSON text (what http_reply_json would send), a
 * malloc'd copy of *len bytes; redacted: without its command line (a reader
 * from the network without the token).  NULL with *err a store_err when
 * the job is unknown (STORE_ENOTFOUND) or the store or memory failed.
 * Any thread.
 */
/*
 * The view of job id as a new JSON object (other nodes' ranks merged, its
 * energy), redacted as above; NULL with *err a store_err.  Any thread.
 */
json_t *job_view_json(struct app *app, int64_t id, bool redacted, int *err);

char *job_view_text(struct app *app, int64_t id, bool redacted, size_t *len, int *err);

/*
 * What a reader from the network without the token sees of a job: all but
 * its command line, which carries another user's paths and arguments (see
 * dlprofd.conf(5), read_access).  The key stays, null, so views keep their
 * shape.
 */
void job_view_redact(json_t *job);

#endif
