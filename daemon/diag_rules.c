/*
 * The diagnosis rules (see diag_rules.h).  Each kind of verdict is one rule:
 * a condition over one window's figures, the figures it shows as evidence,
 * and a hint written from their means over the span the verdict held.
 * Figures derived from several samples (runnable threads, phase shares,
 * misses per instruction) are computed once per window first.
 */
#include "diag_rules.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "diag_sustain.h"

/*
 * Oversubscribed needs the job's own threads to keep this share of its CPUs
 * busy: on a node overloaded by others, a job's few threads also queue for
 * a CPU, but the CPUs go to the others.
 */
#define DIAG_OVERSUB_OWN_SHARE 0.4
/* A counted rate at this share of the node's measured peak binds the job. */
#define DIAG_PEAK_SHARE 0.7

/* A window's figures that take more than one sample. */
struct diag_derived {
	double runnable;           /* threads wanting a CPU: running plus waiting, in cores */
	double cpu_share;          /* runnable over the allowed CPUs */
	double data_share, comm_share, checkpoint_share;  /* of the step time */
	double checkpoint_cost_s;  /* mean time of one checkpoint */
	double checkpoint_every_s; /* mean time between checkpoints */
	double mem_share;          /* RSS over the memory limit */
	double gpu_util;           /* per GPU, percent */
	double thread_mean;        /* CPU of the mean busy thread */
	double imbalance;          /* busiest thread over the mean busy thread */
	double mpki;               /* LLC misses per 1000 instructions */
};

static const char *const kind_names[DIAG_NKINDS] = {
	[DIAG_UNDERUSE] = "underuses_cpus",
	[DIAG_GPU_IDLE] = "gpus_idle",
	[DIAG_OVERSUBSCRIBED] = "oversubscribed",
	[DIAG_INPUT_BOUND] = "input_bound",
	[DIAG_MEMORY_PRESSURE] = "memory_pressure",
	[DIAG_IMBALANCED] = "imbalanced_threads",
	[DIAG_COMM_BOUND] = "communication_bound",
	[DIAG_CHECKPOINT] = "checkpoint_cost",
	[DIAG_MEMORY_BOUND] = "memory_bound",
	[DIAG_COMPUTE_BOUND] = "compute_bound",
};

const char *
diag_kind_name(enum diag_kind k)
{
	return k < DIAG_NKINDS ? kind_names[k] : "unknown";
}

/* Phase names by class: a phase counts when its name starts with one of these. */
static const char *const data_phases[] = {"data", "input", "load", "fetch", "prefetch", "read", NULL};
static const char *const comm_phases[] = {"comm", "allreduce", "all_reduce", "allgather", "all_gather",
					  "reduce_scatter", "broadcast", "nccl", "mpi", "collective", "sync", NULL};
static const char *const checkpoint_phases[] = {"checkpoint", "ckpt", "save", NULL};

static bool
starts_with_any(const char *s, const char *const *prefixes)
{
	for (; *prefixes != NULL; prefixes++)
		if (strncmp(s, *prefixes, strlen(*prefixes)) == 0)
			return true;
	return false;
}

enum diag_phase_class
diag_phase_class(const char *phase)
{
	char low[65];
	size_t i;

	if (phase == NULL)
		return DIAG_PHASE_OTHER;
	for (i = 0; phase[i] != '\0' && i < sizeof(low) - 1; i++)
		low[i] = phase[i] >= 'A' && phase[i] <= 'Z' ? (char)(phase[i] - 'A' + 'a') : phase[i];
	low[i] = '\0';
	if (starts_with_any(low, checkpoint_phases))
		return DIAG_PHASE_CHECKPOINT;
	if (starts_with_any(low, comm_phases))
		return DIAG_PHASE_COMM;
	if (starts_with_any(low, data_phases))
		return DIAG_PHASE_DATA;
	return DIAG_PHASE_OTHER;
}

void
diag_window_clear(struct diag_window *w, double t0, double t1)
{
	double *f = &w->cpu_cores, *end = &w->bandwidth;

	for (; f <= end; f++)
		*f = NAN;
	w->t0 = t0;
	w->t1 = t1;
}

static double
ratio(double a, double b)
{
	return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN;
}

/*
 * Phase shares at window i.  Data and communication: of the last window
 * that holds a step, while it is less than sustain_s old (a job reports a
 * few times a second at most, so a narrow window may hold none).
 * Checkpoints are rare: their share is of all steps so far, once two were
 * seen, so one slow checkpoint does not make a verdict of its own.
 */
static void
derive_phases(const struct diag_window *w, size_t i, double sustain_s, struct diag_derived *d, double ckpt[3])
{
	size_t k = i + 1;

	d->data_share = d->comm_share = NAN;
	while (k > 0 && w[i].t1 - w[k - 1].t1 <= sustain_s) {
		k--;
		if (w[k].step_s > 0) {
			d->data_share = isfinite(w[k].data_s) ? w[k].data_s / w[k].step_s : 0;
			d->comm_share = isfinite(w[k].comm_s) ? w[k].comm_s / w[k].step_s : 0;
			break;
		}
	}
	ckpt[0] += w[i].step_s > 0 ? w[i].step_s : 0;
	ckpt[1] += w[i].checkpoint_s > 0 ? w[i].checkpoint_s : 0;
	ckpt[2] += w[i].checkpoints > 0 ? w[i].checkpoints : 0;
	d->checkpoint_share = ckpt[2] >= 2 ? ratio(ckpt[1], ckpt[0]) : NAN;
	d->checkpoint_cost_s = ratio(ckpt[1], ckpt[2]);
	d->checkpoint_every_s = ckpt[2] >= 2 ? (w[i].t1 - w[0].t0) / ckpt[2] : NAN;
}

static void
derive(const struct diag_window *w, size_t i, const struct diag_thresholds *th, struct diag_derived *d,
       double ckpt[3])
{
	const struct diag_window *x = &w[i];

	d->runnable = isfinite(x->wait_cores) ? x->cpu_cores + x->wait_cores : x->cpu_cores;
	d->cpu_share = ratio(d->runnable, x->allowed_cpus);
	d->mem_share = ratio(x->rss_bytes, x->mem_limit_bytes);
	d->gpu_util = ratio(x->gpu_util_percent, x->gpus);
	/*
	 * The mean busy thread is of the busy threads' own CPU: the job's
	 * whole cpu_cores also holds its threads under the busy mark (an idle
	 * parent, a helper at 0.2 of a core), and over busy_threads alone
	 * they raise the mean, so a job whose one thread runs 1.7x its busy
	 * peers read 1.5x.  Stores written before the sum was sampled hold
	 * only cpu_cores: the mean from it errs high, toward no verdict.
	 */
	d->thread_mean = ratio(isfinite(x->busy_thread_cores) ? x->busy_thread_cores : x->cpu_cores, x->busy_threads);
	d->imbalance = ratio(x->thread_max_cores, d->thread_mean);
	d->mpki = ratio(x->llc_misses_per_s, x->instructions_per_s / 1000.0);
	derive_phases(w, i, th->sustain_s, d, ckpt);
}

/* Whether a figure is measured and at or above a threshold that is set. */
static bool
at_least(double v, double th)
{
	return isfinite(v) && th > 0 && v >= th;
}

static bool
holds(enum diag_kind k, const struct diag_window *x, const struct diag_derived *d, const struct diag_thresholds *th)
{
	switch (k) {
	case DIAG_UNDERUSE:
		return isfinite(d->cpu_share) && x->allowed_cpus >= 2 && d->cpu_share < th->underuse_share;
	case DIAG_GPU_IDLE:
		return x->gpus >= 1 && isfinite(d->gpu_util) && d->gpu_util < th->gpu_idle_percent;
	case DIAG_OVERSUBSCRIBED:
		return isfinite(d->cpu_share) && x->threads > x->allowed_cpus && d->cpu_share > th->oversub_ratio &&
		       x->cpu_cores >= DIAG_OVERSUB_OWN_SHARE * x->allowed_cpus;
	case DIAG_INPUT_BOUND:
		return at_least(d->data_share, th->input_share);
	case DIAG_MEMORY_PRESSURE:
		return at_least(d->mem_share, th->memory_share) || at_least(x->major_faults_per_s, th->major_faults_per_s);
	case DIAG_IMBALANCED:
		return x->busy_threads >= 2 && at_least(d->imbalance, th->imbalance_ratio);
	case DIAG_COMM_BOUND:
		return at_least(d->comm_share, th->comm_share);
	case DIAG_CHECKPOINT:
		return at_least(d->checkpoint_share, th->checkpoint_share);
	case DIAG_MEMORY_BOUND:
		return (isfinite(x->ipc) && isfinite(d->mpki) && x->ipc < th->ipc_low && d->mpki >= th->llc_mpki) ||
		       (th->peak_bandwidth > 0 && at_least(ratio(x->bandwidth, th->peak_bandwidth), DIAG_PEAK_SHARE));
	case DIAG_COMPUTE_BOUND:
		return (isfinite(x->ipc) && isfinite(d->mpki) && x->ipc >= th->ipc_high && d->mpki < th->llc_mpki) ||
		       (th->peak_flops > 0 && at_least(ratio(x->flops, th->peak_flops), DIAG_PEAK_SHARE));
	default:
		return false;
	}
}

/* The evidence each kind shows, by name; values come from figure(). */
static const char *const evidence_names[DIAG_NKINDS][DIAG_MAX_EVIDENCE] = {
	[DIAG_UNDERUSE] = {"cpu_cores", "runnable_threads", "allowed_cpus", "busy_threads", "threads"},
	[DIAG_GPU_IDLE] = {"gpus", "gpu_util_percent", "cpu_cores", "allowed_cpus", "data_share"},
	[DIAG_OVERSUBSCRIBED] = {"runnable_threads", "allowed_cpus", "threads", "busy_threads", "cpu_wait_cores",
				 "context_switches_per_s", "cpu_cores"},
	[DIAG_INPUT_BOUND] = {"data_share", "processes", "allowed_cpus", "gpu_util_percent", "cpu_cores"},
	[DIAG_MEMORY_PRESSURE] = {"rss_bytes", "memory_limit_bytes", "memory_share", "major_faults_per_s"},
	[DIAG_IMBALANCED] = {"thread_max_cores", "thread_mean_cores", "busy_threads", "cpu_cores", "allowed_cpus"},
	[DIAG_COMM_BOUND] = {"communication_share"},
	[DIAG_CHECKPOINT] = {"checkpoint_share", "checkpoint_seconds", "checkpoint_every_s"},
	[DIAG_MEMORY_BOUND] = {"ipc", "llc_misses_per_kinstr", "memory_bandwidth_bytes_per_s", "flops"},
	[DIAG_COMPUTE_BOUND] = {"ipc", "llc_misses_per_kinstr", "flops", "memory_bandwidth_bytes_per_s"},
};

static double
figure(const char *name, const struct diag_window *x, const struct diag_derived *d)
{
	static const struct {
		const char *name;
		size_t off;
		int derived;
	} map[] = {
		{"cpu_cores", offsetof(struct diag_window, cpu_cores), 0},
		{"allowed_cpus", offsetof(struct diag_window, allowed_cpus), 0},
		{"busy_threads", offsetof(struct diag_window, busy_threads), 0},
		{"threads", offsetof(struct diag_window, threads), 0},
		{"processes", offsetof(struct diag_window, processes), 0},
		{"gpus", offsetof(struct diag_window, gpus), 0},
		{"cpu_wait_cores", offsetof(struct diag_window, wait_cores), 0},
		{"context_switches_per_s", offsetof(struct diag_window, switches_per_s), 0},
		{"rss_bytes", offsetof(struct diag_window, rss_bytes), 0},
		{"memory_limit_bytes", offsetof(struct diag_window, mem_limit_bytes), 0},
		{"major_faults_per_s", offsetof(struct diag_window, major_faults_per_s), 0},
		{"thread_max_cores", offsetof(struct diag_window, thread_max_cores), 0},
		{"ipc", offsetof(struct diag_window, ipc), 0},
		{"flops", offsetof(struct diag_window, flops), 0},
		{"memory_bandwidth_bytes_per_s", offsetof(struct diag_window, bandwidth), 0},
		{"runnable_threads", offsetof(struct diag_derived, runnable), 1},
		{"gpu_util_percent", offsetof(struct diag_derived, gpu_util), 1},
		{"data_share", offsetof(struct diag_derived, data_share), 1},
		{"communication_share", offsetof(struct diag_derived, comm_share), 1},
		{"checkpoint_share", offsetof(struct diag_derived, checkpoint_share), 1},
		{"checkpoint_seconds", offsetof(struct diag_derived, checkpoint_cost_s), 1},
		{"checkpoint_every_s", offsetof(struct diag_derived, checkpoint_every_s), 1},
		{"memory_share", offsetof(struct diag_derived, mem_share), 1},
		{"thread_mean_cores", offsetof(struct diag_derived, thread_mean), 1},
		{"llc_misses_per_kinstr", offsetof(struct diag_derived, mpki), 1},
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].name, name) == 0)
			return *(const double *)((const char *)(map[i].derived ? (const void *)d : (const void *)x) +
						 map[i].off);
	return NAN;
}

/* The mean of each evidence figure over windows [a, b], those measured. */
static void
evidence_means(struct diag_verdict *v, const struct diag_window *w, const struct diag_derived *d, size_t a,
	       size_t b)
{
	double sum[DIAG_MAX_EVIDENCE] = {0}, val;
	unsigned cnt[DIAG_MAX_EVIDENCE] = {0};
	size_t i, e;

	for (e = 0; e < DIAG_MAX_EVIDENCE && evidence_names[v->kind][e] != NULL; e++)
		for (i = a; i <= b; i++)
			if (isfinite(val = figure(evidence_names[v->kind][e], &w[i], &d[i]))) {
				sum[e] += val;
				cnt[e]++;
			}
	v->nevidence = 0;
	for (e = 0; e < DIAG_MAX_EVIDENCE && evidence_names[v->kind][e] != NULL; e++)
		if (cnt[e] > 0)
			v->evidence[v->nevidence++] = (struct diag_figure){evidence_names[v->kind][e], sum[e] / cnt[e]};
}

double
diag_evidence(const struct diag_verdict *v, const char *name)
{
	for (size_t i = 0; i < v->nevidence; i++)
		if (strcmp(v->evidence[i].name, name) == 0)
			return v->evidence[i].value;
	return NAN;
}

static void
hint_cpu(struct diag_verdict *v, const struct diag_thresholds *th)
{
	char *h = v->hint;
	size_t n = sizeof(v->hint);
	double busy;

	(void)th;
	switch (v->kind) {
	case DIAG_UNDERUSE:
		busy = diag_evidence(v, "busy_threads");
		snprintf(h, n, "uses %.1f of its %.0f allowed CPUs (%.0f busy threads): run with OMP_NUM_THREADS=%.0f "
			 "or ask for fewer CPUs", diag_evidence(v, "cpu_cores"), diag_evidence(v, "allowed_cpus"),
			 isfinite(busy) ? busy : 0, diag_evidence(v, "allowed_cpus"));
		break;
	case DIAG_OVERSUBSCRIBED:
		snprintf(h, n, "%.1f threads want a CPU on %.0f allowed CPUs (%.0f threads, %.1f cores waiting for a CPU): "
			 "run with OMP_NUM_THREADS=%.0f, and intra-op x inter-op threads (nested OpenMP, DataLoader "
			 "workers' own threads) within %.0f CPUs", diag_evidence(v, "runnable_threads"), diag_evidence(v, "allowed_cpus"),
			 diag_evidence(v, "threads"), isfinite(diag_evidence(v, "cpu_wait_cores")) ? diag_evidence(v, "cpu_wait_cores") : 0,
			 diag_evidence(v, "allowed_cpus"), diag_evidence(v, "allowed_cpus"));
		break;
	case DIAG_IMBALANCED:
		snprintf(h, n, "its busiest thread uses %.2f cores while its %.0f busy threads average %.2f: the work is "
			 "not spread evenly (a serial main loop, a lock, uneven partitions); split the heavy part or "
			 "give its threads equal shares", diag_evidence(v, "thread_max_cores"), diag_evidence(v, "busy_threads"),
			 diag_evidence(v, "thread_mean_cores"));
		break;
	default:
		break;
	}
}

static void
hint_memory(struct diag_verdict *v, const struct diag_thresholds *th)
{
	char *h = v->hint;
	size_t n = sizeof(v->hint);
	double rss = diag_evidence(v, "rss_bytes"), lim = diag_evidence(v, "memory_limit_bytes");

	switch (v->kind) {
	case DIAG_MEMORY_PRESSURE:
		if (isfinite(lim))
			snprintf(h, n, "resident memory %.2f GiB is %.0f%% of its %.2f GiB limit, %.0f major faults/s: ask "
				 "for more memory or shrink what it holds (batch, prefetch queues, caches)",
				 rss / 1073741824.0, diag_evidence(v, "memory_share") * 100, lim / 1073741824.0,
				 isfinite(diag_evidence(v, "major_faults_per_s")) ? diag_evidence(v, "major_faults_per_s") : 0);
		else
			snprintf(h, n, "%.0f major page faults/s (resident %.2f GiB): it waits on paging or swap; ask for "
				 "more memory or shrink what it holds", diag_evidence(v, "major_faults_per_s"), rss / 1073741824.0);
		break;
	case DIAG_MEMORY_BOUND:
		snprintf(h, n, "memory-bound: IPC %.2f with %.1f LLC misses per 1000 instructions (thresholds %.2f, %.1f): "
			 "more threads will not help; improve locality (fused ops, blocking, fewer threads per socket, "
			 "a larger batch per thread)", diag_evidence(v, "ipc"), diag_evidence(v, "llc_misses_per_kinstr"), th->ipc_low,
			 th->llc_mpki);
		break;
	case DIAG_COMPUTE_BOUND:
		snprintf(h, n, "compute-bound: IPC %.2f with %.1f LLC misses per 1000 instructions: more cores or "
			 "better-vectorised kernels (MKL/oneDNN builds, bf16) pay; memory tuning will not",
			 diag_evidence(v, "ipc"), diag_evidence(v, "llc_misses_per_kinstr"));
		break;
	default:
		break;
	}
}

/* " (3 processes on 2 CPUs, GPUs busy 40%)" with the figures measured, or "". */
static void
input_context(const struct diag_verdict *v, char *buf, size_t len)
{
	double procs = diag_evidence(v, "processes"), cpus = diag_evidence(v, "allowed_cpus");
	double gpu = diag_evidence(v, "gpu_util_percent");
	size_t o = 0;

	buf[0] = '\0';
	if (isfinite(procs) && isfinite(cpus))
		o += (size_t)snprintf(buf + o, len - o, "%s%.0f processes on %.0f CPUs", o ? ", " : " (", procs, cpus);
	if (isfinite(gpu) && o < len)
		o += (size_t)snprintf(buf + o, len - o, "%sGPUs busy %.0f%%", o ? ", " : " (", gpu);
	if (o > 0 && o < len)
		snprintf(buf + o, len - o, ")");
}

static void
hint_phases(struct diag_verdict *v, const struct diag_thresholds *th)
{
	char *h = v->hint, ctx[96];
	size_t n = sizeof(v->hint);
	double c = diag_evidence(v, "checkpoint_seconds"), every = diag_evidence(v, "checkpoint_every_s");

	switch (v->kind) {
	case DIAG_INPUT_BOUND:
		input_context(v, ctx, sizeof(ctx));
		snprintf(h, n, "loading data takes %.0f%% of each step%s: add loader workers (DataLoader num_workers, "
			 "DLPROF_DATALOADER_WORKERS), prefetch and pin memory, or cache decoded data",
			 diag_evidence(v, "data_share") * 100, ctx);
		break;
	case DIAG_COMM_BOUND:
		snprintf(h, n, "communication takes %.0f%% of each step: overlap it with compute (bucketed all-reduce), "
			 "send fewer and larger messages, or accumulate gradients over more steps",
			 diag_evidence(v, "communication_share") * 100);
		break;
	case DIAG_CHECKPOINT:
		if (th->mtbf_s > 0 && isfinite(c))
			snprintf(h, n, "checkpoints take %.0f%% of the run (%.1f s each, one every %.0f s); for a mean time "
				 "between failures of %.1f h, Young/Daly's interval is %.0f s",
				 diag_evidence(v, "checkpoint_share") * 100, c, every, th->mtbf_s / 3600, sqrt(2 * c * th->mtbf_s));
		else
			snprintf(h, n, "checkpoints take %.0f%% of the run (%.1f s each, one every %.0f s): checkpoint less "
				 "often or asynchronously; set diag_mtbf_hours for Young/Daly's interval",
				 diag_evidence(v, "checkpoint_share") * 100, c, every);
		break;
	case DIAG_GPU_IDLE:
		/* Input that takes as much of the step as input_bound's threshold is what the GPUs wait on. */
		if (at_least(diag_evidence(v, "data_share"), th->input_share))
			snprintf(h, n, "its %.0f GPU(s) are busy %.0f%% of the time and loading data takes %.0f%% of each "
				 "step: the GPUs wait on input; add loader workers (DataLoader num_workers, "
				 "DLPROF_DATALOADER_WORKERS, a knob the tuner tunes where the job declares it), prefetch "
				 "and pin memory", diag_evidence(v, "gpus"), diag_evidence(v, "gpu_util_percent"),
				 diag_evidence(v, "data_share") * 100);
		else
			snprintf(h, n, "its %.0f GPU(s) are busy %.0f%% of the time: feed them faster (loader workers, "
				 "larger batch, data on the GPU) or ask for fewer GPUs", diag_evidence(v, "gpus"),
				 diag_evidence(v, "gpu_util_percent"));
		break;
	default:
		break;
	}
}

/* Closes verdict v over windows [a, b]: evidence and hint. */
static void
verdict_close(struct diag_verdict *v, const struct diag_window *w, const struct diag_derived *d, size_t a,
	      size_t b, const struct diag_thresholds *th)
{
	evidence_means(v, w, d, a, b);
	hint_cpu(v, th);
	hint_memory(v, th);
	hint_phases(v, th);
}

/* The first window that ends after t (the one a run started in). */
static size_t
window_at(const struct diag_window *w, size_t n, double t)
{
	size_t i = 0;

	while (i + 1 < n && w[i].t1 <= t)
		i++;
	return i;
}

/* One kind over all windows; appends its verdicts to out. */
static size_t
evaluate_kind(enum diag_kind k, const struct diag_window *w, const struct diag_derived *d, size_t n,
	      const struct diag_thresholds *th, struct diag_verdict *out, size_t room)
{
	struct diag_sustain st = {0};
	size_t i, nv = 0;
	double until;

	for (i = 0; i < n && nv < room; i++) {
		switch (diag_sustain_step(&st, w[i].t0, w[i].t1, holds(k, &w[i], &d[i], th), th->sustain_s, &until)) {
		case DIAG_SUSTAIN_START:
			out[nv] = (struct diag_verdict){.kind = k, .since = st.since, .active = true};
			break;
		case DIAG_SUSTAIN_END:
			out[nv].until = until;
			out[nv].active = false;
			verdict_close(&out[nv], w, d, window_at(w, n, out[nv].since), window_at(w, n, until) - 1, th);
			nv++;
			break;
		case DIAG_SUSTAIN_NONE:
			break;
		}
	}
	if (st.on && nv < room) {
		out[nv].until = w[n - 1].t1;
		verdict_close(&out[nv], w, d, window_at(w, n, out[nv].since), n - 1, th);
		nv++;
	}
	return nv;
}

size_t
diag_evaluate(const struct diag_window *w, size_t n, const struct diag_thresholds *th, struct diag_verdict *out,
	      size_t max)
{
	struct diag_derived *d;
	double ckpt[3] = {0, 0, 0};   /* step time, checkpoint time and checkpoints so far */
	size_t i, nv = 0;
	int k;

	if (n == 0 || max == 0 || (d = calloc(n, sizeof(*d))) == NULL)
		return 0;
	for (i = 0; i < n; i++)
		derive(w, i, th, &d[i], ckpt);
	for (k = 0; k < DIAG_NKINDS && nv < max; k++)
		nv += evaluate_kind((enum diag_kind)k, w, d, n, th, out + nv, max - nv);
	free(d);
	return nv;
}

bool
diag_undecided(const struct diag_window *w, size_t n, char *why, size_t len)
{
	bool ipc = false, misses = false;
	size_t i;

	for (i = 0; i < n; i++) {
		ipc = ipc || isfinite(w[i].ipc);
		misses = misses || (isfinite(w[i].llc_misses_per_s) && isfinite(w[i].instructions_per_s));
	}
	if (ipc && misses)
		return false;
	snprintf(why, len, "compute- or memory-bound is not decided: it takes %s%s%s counted for the job (perf "
		 "hardware events, or PAPI_TOT_INS, PAPI_TOT_CYC and PAPI_L3_TCM), which were not counted for it",
		 ipc ? "" : "instructions and cycles (IPC)", ipc || misses ? "" : " and ",
		 misses ? "" : "last-level cache misses");
	return true;
}
