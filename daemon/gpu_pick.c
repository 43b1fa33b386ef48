/*
 * Implementation of gpu_pick.h: which GPUs are idle, the lease table (one
 * slot per NVML index), and the CUDA_VISIBLE_DEVICES value of a pick.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_pick.h"

#define HOLDER_MAX 160

struct lease {
	char holder[HOLDER_MAX];     /* "" : anonymous; a longer holder is kept and compared cut */
	double until;                /* 0: free */
	bool idle;                   /* it was idle when handed out */
};

static bool same_name(const struct lease *s, const char *holder)
{
	return strncmp(s->holder, holder, HOLDER_MAX - 1) == 0;
}

struct gpu_leases {
	pthread_mutex_t lock;
	double lease_s;
	struct lease slot[GPU_PICK_MAX];  /* by NVML index */
};

struct gpu_leases *gpu_leases_new(double lease_s)
{
	struct gpu_leases *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	if (pthread_mutex_init(&l->lock, NULL) != 0) {
		free(l);
		return NULL;
	}
	l->lease_s = lease_s;
	return l;
}

void gpu_leases_free(struct gpu_leases *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l);
}

/* Whether entry (an index, or a UUID or its leading part as CUDA takes it) names g. */
static bool names_gpu(const char *entry, size_t len, const struct gpu_seen *g)
{
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len && isdigit((unsigned char)entry[i]); i++)
		;
	if (i == len)
		return strtol(entry, NULL, 10) == g->index;
	return g->uuid[0] && strncmp(g->uuid, entry, len) == 0;
}

/* Whether g is in the allocation (a comma list; NULL or "": the whole node). */
static bool allowed(const char *list, const struct gpu_seen *g)
{
	const char *p = list;

	if (!list || !*list)
		return true;
	while (*p) {
		size_t len = strcspn(p, ",");
		while (len && isspace((unsigned char)*p))
			p++, len--;
		if (names_gpu(p, len, g))
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

/* Whether the lease holds: within its time, or its holder's job still runs. */
static bool in_force(const struct lease *s, const struct gpu_pick_request *req)
{
	if (s->until > req->now)
		return true;
	if (s->until <= 0 || !s->holder[0])
		return false;
	for (size_t i = 0; i < req->nrunning; i++)
		if (req->running[i] && same_name(s, req->running[i]))
			return true;
	return false;
}

/* Leased to someone else: another holder, or anyone when the asker is anonymous (it cannot be the same). */
static bool leased_to_other(const struct gpu_leases *l, int index, const char *holder,
			    const struct gpu_pick_request *req)
{
	const struct lease *s = &l->slot[index];

	return in_force(s, req) && (!holder[0] || !same_name(s, holder));
}

static bool unknown(const struct gpu_seen *g)
{
	return g->util_percent < 0 || g->mem_used_bytes < 0 || g->processes < 0;
}

/* Why g is not idle, or NULL when it is. */
static const char *busy_reason(const struct gpu_leases *l, const struct gpu_seen *g, const char *holder,
			       const struct gpu_pick_request *req)
{
	if (unknown(g))
		return "not in the last sample";
	if (g->processes > 0)
		return "a process runs on it";
	if (g->util_percent > GPU_PICK_IDLE_UTIL_PERCENT)
		return "busy by utilisation";
	if (g->mem_total_bytes > 0 && g->mem_used_bytes > GPU_PICK_IDLE_MEM_SHARE * g->mem_total_bytes)
		return "memory in use";
	if (leased_to_other(l, g->index, holder, req))
		return "handed to another job";
	return NULL;
}

/* The order busy GPUs fill a short pick in: not leased, measured, fewer processes, less utilisation, less memory. */
struct candidate {
	const struct gpu_seen *g;
	bool leased;
};

static int less_busy_first(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	double dx, dy;

	if (x->leased != y->leased)
		return x->leased ? 1 : -1;
	if (unknown(x->g) != unknown(y->g))   /* a GPU not in the sample may be the busiest */
		return unknown(x->g) ? 1 : -1;
	if (x->g->processes != y->g->processes)
		return x->g->processes < y->g->processes ? -1 : 1;
	if (x->g->util_percent != y->g->util_percent)
		return x->g->util_percent < y->g->util_percent ? -1 : 1;
	dx = x->g->mem_used_bytes, dy = y->g->mem_used_bytes;
	if (dx != dy)
		return dx < dy ? -1 : 1;
	return x->g->index - y->g->index;
}

static void add_pick(struct gpu_pick *out, const struct gpu_seen *g, bool idle)
{
	out->index[out->n] = g->index;
	snprintf(out->uuid[out->n], GPU_UUID_MAX, "%s", g->uuid);
	out->n++;
	if (idle)
		out->idle++;
}

/* CUDA_VISIBLE_DEVICES: UUIDs, which mean the same GPU in any device order; indices when one lacks a UUID. */
static void devices_value(struct gpu_pick *out)
{
	size_t off = 0;
	int i;

	out->by_index = false;
	for (i = 0; i < out->n; i++)
		if (!out->uuid[i][0])
			out->by_index = true;
	out->devices[0] = '\0';
	for (i = 0; i < out->n && off < sizeof(out->devices); i++) {
		int w = out->by_index
			? snprintf(out->devices + off, sizeof(out->devices) - off, "%s%d", i ? "," : "", out->index[i])
			: snprintf(out->devices + off, sizeof(out->devices) - off, "%s%s", i ? "," : "", out->uuid[i]);
		if (w < 0 || (size_t)w >= sizeof(out->devices) - off) {
			out->devices[off] = '\0';  /* a cut entry would name another GPU: end before it */
			break;
		}
		off += (size_t)w;
	}
}

static void index_list(const struct gpu_pick *out, int from, int to, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = from; i < to && off + 12 < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%d", i > from ? "," : "", out->index[i]);
}

/*
 * The holder's own lease, when it holds exactly want GPUs, all idle when
 * handed out and still allowed: it asks again.  A lease that had to take
 * busy GPUs is picked afresh, so a GPU freed since is preferred.
 */
static bool same_holder(const struct gpu_leases *l, const struct gpu_seen *gpus, size_t n,
			const struct gpu_pick_request *req, const char *holder, struct gpu_pick *out)
{
	size_t i;

	if (!holder[0])
		return false;
	for (i = 0; i < n; i++) {
		const struct lease *s;
		if (gpus[i].index < 0 || gpus[i].index >= GPU_PICK_MAX)
			continue;
		s = &l->slot[gpus[i].index];
		if (in_force(s, req) && same_name(s, holder)) {
			if (!allowed(req->allowed, &gpus[i]) || out->n == GPU_PICK_MAX || !s->idle)
				return out->n = out->idle = 0, false;
			add_pick(out, &gpus[i], true);
		}
	}
	if (out->n == req->want)
		return true;
	out->n = out->idle = 0;
	return false;
}

static void explain(struct gpu_pick *out, long want, int in_alloc, const char *scope, const char *first_busy)
{
	char idle[160], busy[160];

	index_list(out, 0, out->idle, idle, sizeof(idle));
	index_list(out, out->idle, out->n, busy, sizeof(busy));
	if (out->idle == want)
		snprintf(out->reason, sizeof(out->reason),
			 "%ld idle GPU%s of %s picked: %.100s (no process, utilisation at most %.0f %%, memory near the "
			 "driver's own; leased for a while so that no other job is handed them)",
			 want, want == 1 ? "" : "s", scope, idle, GPU_PICK_IDLE_UTIL_PERCENT);
	else if (in_alloc < want)
		snprintf(out->reason, sizeof(out->reason),
			 "%ld GPUs asked but %s has only %d: all handed out (idle: %.100s; busy: %.100s)", want, scope,
			 in_alloc, idle[0] ? idle : "none", busy[0] ? busy : "none");
	else
		snprintf(out->reason, sizeof(out->reason),
			 "only %d of the %ld GPUs asked are idle in %s: picked idle %.100s and the least busy %.100s "
			 "(GPU %d: %s)", out->idle, want, scope, idle[0] ? idle : "none", busy, out->index[out->idle],
			 first_busy ? first_busy : "busy");
}

void gpu_pick(struct gpu_leases *l, const struct gpu_seen *gpus, size_t n, const struct gpu_pick_request *req,
	      struct gpu_pick *out)
{
	const char *holder = req->holder ? req->holder : "", *scope = req->allowed && *req->allowed
		? "the job's allocation" : "this node";
	struct candidate busy[GPU_PICK_MAX];
	const char *why[GPU_PICK_MAX] = {NULL};
	size_t i, nbusy = 0;
	int in_alloc = 0, nmig = 0;

	memset(out, 0, sizeof(*out));
	if (req->want <= 0)
		return;
	if (!gpus || n == 0) {
		snprintf(out->reason, sizeof(out->reason),
			 "GPUs could not be verified idle (NVML is not sampling on this node): CUDA_VISIBLE_DEVICES "
			 "names the first %ld device%s, as without dlprofd", req->want, req->want == 1 ? "" : "s");
		return;
	}
	if (n > GPU_PICK_MAX)
		n = GPU_PICK_MAX;
	out->verified = true;
	pthread_mutex_lock(&l->lock);
	if (same_holder(l, gpus, n, req, holder, out)) {
		snprintf(out->reason, sizeof(out->reason), "the GPUs already leased to %s", holder);
		goto lease;
	}
	for (i = 0; i < n; i++) {
		const struct gpu_seen *g = &gpus[i];
		if (g->index < 0 || g->index >= GPU_PICK_MAX || !allowed(req->allowed, g))
			continue;
		/* CUDA sees a MIG GPU's instances (MIG-...), not the GPU: it is never handed out whole. */
		if (g->mig) {
			nmig++;
			continue;
		}
		in_alloc++;
		why[i] = busy_reason(l, g, holder, req);
		if (!why[i] && out->n < req->want)
			add_pick(out, g, true);
		else if (why[i])
			busy[nbusy++] = (struct candidate){g, leased_to_other(l, g->index, holder, req)};
	}
	if (in_alloc == 0) {
		out->verified = false;
		if (nmig)
			snprintf(out->reason, sizeof(out->reason),
				 "every GPU of %s is in MIG mode, whose instances are not handed out: not verified; "
				 "CUDA_VISIBLE_DEVICES names the first %ld device%s", scope, req->want,
				 req->want == 1 ? "" : "s");
		else
			snprintf(out->reason, sizeof(out->reason),
				 "the job's allocation (%.200s) names no GPU NVML sees: not verified; "
				 "CUDA_VISIBLE_DEVICES names the first %ld device%s", req->allowed, req->want,
				 req->want == 1 ? "" : "s");
		pthread_mutex_unlock(&l->lock);
		return;
	}
	qsort(busy, nbusy, sizeof(busy[0]), less_busy_first);
	for (i = 0; i < nbusy && out->n < req->want; i++)
		add_pick(out, busy[i].g, false);
	explain(out, req->want, in_alloc, scope, nbusy ? why[busy[0].g - gpus] : NULL);
lease:
	for (i = 0; i < GPU_PICK_MAX; i++)
		if (holder[0] && same_name(&l->slot[i], holder))
			l->slot[i].until = 0;  /* a holder asking again gives back what it held */
	for (int k = 0; k < out->n; k++) {
		struct lease *s = &l->slot[out->index[k]];
		snprintf(s->holder, sizeof(s->holder), "%s", holder);
		s->until = req->now + l->lease_s;
		s->idle = k < out->idle;
	}
	pthread_mutex_unlock(&l->lock);
	devices_value(out);
}

json_t *gpu_pick_json(const struct gpu_pick *p)
{
	json_t *devs = json_array();

	for (int i = 0; devs && i < p->n; i++)
		if (json_array_append_new(devs, json_pack("{s:i, s:s, s:b}", "index", p->index[i], "uuid", p->uuid[i],
							  "idle", i < p->idle)) < 0) {
			json_decref(devs);
			return NULL;
		}
	return json_pack("{s:b, s:o*, s:s}", "verified", p->verified, "devices", devs, "reason", p->reason);
}
