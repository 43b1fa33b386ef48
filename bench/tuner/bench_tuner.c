/*
 * The tuner benchmark: replays response surfaces (CSV files under
 * bench/tuner/surfaces/) through the tuner's own learner, with simulated
 * measurement noise, and compares it with random search, grid search and
 * successive halving at equal trial budgets.  For every surface and budget k
 * it reports the share of the optimum that each method's recommendation
 * reaches after k trials, the trials needed to get within 3% of the
 * optimum, the cumulative regret of the trials run, and the share of all
 * configs that the final recommendation beats.
 *
 * A trial is a run of one config for STEPS steps: each step's value is the
 * surface's value times (1 + run offset + step noise), and the method sees
 * the trial's mean and its standard error, as the daemon does.
 *
 * Usage: bench_tuner [-r reps] [-k max_budget] surface.csv ...
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "knobs.h"
#include "tuner_learner.h"

#define STEPS 8
#define MAX_K 32
#define MAX_SURFACES 64
#define METHODS 5

/* The tuner as the daemon runs it, the same with UCB instead of EI (a variant, not a baseline), the baselines. */
static const char *method_names[METHODS] = {"tuner", "tuner-ucb", "random", "grid", "halving"};
enum { M_TUNER, M_UCB, M_RANDOM, M_GRID, M_HALVING };

struct surface {
	char name[96];
	struct knob_space sp;
	double *value;          /* per candidate */
	double best;            /* the optimum */
	double step_sd, run_sd; /* noise, relative */
	int kmax;               /* budgets 1..kmax */
	int target_k;           /* min(quarter of the candidates, 12), at least 1 */
};

struct result {
	double share[MAX_K + 1];   /* mean share of the optimum after k trials */
	double within[MAX_K + 1];  /* share of runs within 3% after k trials */
	double regret;             /* mean cumulative regret over kmax trials, in optima */
	double beats;              /* mean share of configs the final pick beats */
	double k3_median;          /* median trials to within 3% (kmax + 1: never) */
};

/* ---- random numbers (splitmix64) ---- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_uniform(void)
{
	return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(void)
{
	return sqrt(-2.0 * log(rng_uniform())) * cos(2.0 * M_PI * rng_uniform());
}

/* ---- surfaces ---- */

static void parse_topology(const char *line, struct knob_topology *t, int *declared_threads)
{
	const char *p;

	if ((p = strstr(line, "cores=")))
		t->cores_allowed = atoi(p + 6);
	if ((p = strstr(line, "cpus=")))
		t->cpus_allowed = atoi(p + 5);
	if ((p = strstr(line, "numa_cores=")))
		t->numa_cores = atoi(p + 11);
	if ((p = strstr(line, "gpus=")))
		t->gpus_total = t->gpus_free = atoi(p + 5);
	if ((p = strstr(line, "declared_threads=")))
		*declared_threads = atoi(p + 17);
	if (t->cpus_allowed == 0)
		t->cpus_allowed = t->cores_allowed;
}

static json_t *cell_json(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *end == '\0' && end != s ? json_integer(v) : json_string(s);
}

/* Splits a CSV line in place; returns the number of fields. */
static int split(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < max) {
		f[n++] = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p++ = '\0';
	}
	return n;
}

/* The knobs of the surface, declared with the values its rows take. */
static json_t *declare(char rows[][KNOB_MAX][KNOB_STR_MAX], int nrows, char head[][KNOB_NAME_MAX], int nknobs)
{
	json_t *decl = json_object();
	int k, r;

	for (k = 0; k < nknobs; k++) {
		json_t *vals = json_array();
		for (r = 0; r < nrows; r++) {
			json_t *v = cell_json(rows[r][k]), *e;
			size_t i;
			int seen = 0;
			json_array_foreach(vals, i, e) seen |= json_equal(e, v);
			if (seen)
				json_decref(v);
			else
				json_array_append_new(vals, v);
		}
		json_object_set_new(decl, head[k], json_pack("{s:o, s:b}", "values", vals, "runtime", 1));
	}
	/* Built-in knobs the surface does not vary are held at one value. */
	if (!json_object_get(decl, "intra_threads"))
		json_object_set_new(decl, "intra_threads", json_pack("{s:[i]}", "values", 1));
	if (!json_object_get(decl, "interop_threads"))
		json_object_set_new(decl, "interop_threads", json_pack("{s:[i]}", "values", 1));
	if (!json_object_get(decl, "gpus"))
		json_object_set_new(decl, "gpus", json_pack("{s:[i]}", "values", 0));
	return decl;
}

static int surface_load(const char *path, struct surface *s)
{
	static char rows[SPACE_MAX_CANDIDATES][KNOB_MAX][KNOB_STR_MAX];
	static double vals[SPACE_MAX_CANDIDATES];
	char head[KNOB_MAX + 2][KNOB_NAME_MAX], line[1024], err[200], *f[KNOB_MAX + 4];
	struct knob_topology topo = { 0 };
	int nknobs = -1, nrows = 0, declared_threads = 0, n, k, r, c;
	FILE *fp = fopen(path, "r");
	json_t *decl;
	const char *base = strrchr(path, '/');

	if (!fp) {
		perror(path);
		return -1;
	}
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", base ? base + 1 : path);
	s->name[strcspn(s->name, ".")] = '\0';
	s->step_sd = 0.05;
	s->run_sd = 0.02;
	while (fgets(line, sizeof(line), fp)) {
		if (strncmp(line, "# topology:", 11) == 0)
			parse_topology(line, &topo, &declared_threads);
		else if (strncmp(line, "# objective: efficiency", 23) == 0)
			topo.efficiency = true;
		else if (strncmp(line, "# noise:", 8) == 0 && strstr(line, "step=") && strstr(line, "run="))
			s->step_sd = atof(strstr(line, "step=") + 5), s->run_sd = atof(strstr(line, "run=") + 4);
		if (line[0] == '#' || line[0] == '\n')
			continue;
		n = split(line, f, KNOB_MAX + 4);
		if (nknobs < 0) {
			for (nknobs = 0; nknobs < n && strcmp(f[nknobs], "objective") != 0; nknobs++)
				snprintf(head[nknobs], KNOB_NAME_MAX, "%s", f[nknobs]);
			continue;
		}
		if (n <= nknobs || nrows >= SPACE_MAX_CANDIDATES)
			continue;
		for (k = 0; k < nknobs; k++)
			snprintf(rows[nrows][k], KNOB_STR_MAX, "%s", f[k]);
		vals[nrows++] = atof(f[nknobs]);
	}
	fclose(fp);
	(void)declared_threads;
	decl = declare(rows, nrows, head, nknobs);
	if (knobs_space_build(&s->sp, &topo, decl, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		json_decref(decl);
		return -1;
	}
	json_decref(decl);
	s->value = calloc((size_t)s->sp.ncand, sizeof(double));
	for (c = 0; c < s->sp.ncand; c++)
		s->value[c] = NAN;
	for (r = 0; r < nrows; r++) {
		json_t *cfg = json_object();
		for (k = 0; k < nknobs; k++)
			json_object_set_new(cfg, head[k], cell_json(rows[r][k]));
		c = knobs_candidate_of(&s->sp, cfg, -1);
		json_decref(cfg);
		if (c >= 0)
			s->value[c] = vals[r];
	}
	for (c = 0; c < s->sp.ncand; c++) {
		if (isnan(s->value[c])) {
			fprintf(stderr, "%s: candidate %d has no row\n", path, c);
			return -1;
		}
		if (s->value[c] > s->best)
			s->best = s->value[c];
	}
	s->target_k = s->sp.ncand / 4 < 12 ? s->sp.ncand / 4 : 12;
	if (s->target_k < 1)
		s->target_k = 1;
	return 0;
}

/* One trial: STEPS noisy steps; the trial's mean and variance of the mean. */
static void measure(const struct surface *s, int c, double *mean, double *var_mean)
{
	double run = s->run_sd * rng_normal(), sum = 0.0, sq = 0.0, v;
	int i;

	for (i = 0; i < STEPS; i++) {
		v = s->value[c] * (1.0 + run + s->step_sd * rng_normal());
		sum += v;
		sq += v * v;
	}
	*mean = sum / STEPS;
	*var_mean = (sq - STEPS * *mean * *mean) / (STEPS - 1) / STEPS;
}

/* ---- methods: each fills rec[k] (pick after k trials) and tried[k] ---- */

static void run_tuner(const struct surface *s, int kmax, int *rec, int *tried, enum learner_acq acq)
{
	struct learner *l = learner_new(&s->sp);
	struct knob_filter f;
	double m, v;
	int k;

	l->acq = acq;
	knobs_filter_all(&s->sp, &f);
	for (k = 1; k <= kmax; k++) {
		tried[k] = learner_propose(l, &f);
		measure(s, tried[k], &m, &v);
		learner_add(l, tried[k], STEPS, m, v, false);
		rec[k] = learner_best(l, &f);
	}
	learner_free(l);
}

/* Observed means; the pick is the best mean among tried configs. */
struct tally {
	double sum[SPACE_MAX_CANDIDATES];
	int n[SPACE_MAX_CANDIDATES];
};

static int tally_best(const struct tally *t, int ncand)
{
	int c, best = -1;

	for (c = 0; c < ncand; c++)
		if (t->n[c] && (best < 0 || t->sum[c] / t->n[c] > t->sum[best] / t->n[best]))
			best = c;
	return best;
}

static void tally_measure(const struct surface *s, struct tally *t, int c)
{
	double m, v;

	measure(s, c, &m, &v);
	t->sum[c] += m;
	t->n[c]++;
}

static void shuffle(int *a, int n)
{
	int i, j, x;

	for (i = n - 1; i > 0; i--) {
		j = (int)(rng_uniform() * (i + 1));
		x = a[i], a[i] = a[j], a[j] = x;
	}
}

static void run_random(const struct surface *s, int kmax, int *rec, int *tried)
{
	static struct tally t;
	int order[SPACE_MAX_CANDIDATES], k, c;

	memset(&t, 0, sizeof(t));
	for (c = 0; c < s->sp.ncand; c++)
		order[c] = c;
	shuffle(order, s->sp.ncand);
	for (k = 1; k <= kmax; k++) {
		tried[k] = order[(k - 1) % s->sp.ncand];
		tally_measure(s, &t, tried[k]);
		rec[k] = tally_best(&t, s->sp.ncand);
	}
}

/* Evenly spaced value indices of a knob with n values, m of them. */
static int grid_index(int n, int m, int j)
{
	if (m <= 1)
		return n / 2;
	return (int)lround((double)j * (n - 1) / (m - 1));
}

/*
 * Grid search with a budget: as many evenly spaced values per knob as the
 * budget allows (refining the knob with most values first), the rest of the
 * budget on random configs not on the grid.  Returns the pick.
 */
static int run_grid(const struct surface *s, int budget, int *tried)
{
	static struct tally t;
	int m[KNOB_MAX], i, k = 0, c, order[SPACE_MAX_CANDIDATES];
	long prod = 1;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < s->sp.nknobs; i++)
		m[i] = 1;
	for (;;) {
		int pick = -1;
		for (i = 0; i < s->sp.nknobs; i++)
			if (m[i] < s->sp.knobs[i].nvalues && prod / m[i] * (m[i] + 1) <= budget &&
			    (pick < 0 || s->sp.knobs[i].nvalues - m[i] > s->sp.knobs[pick].nvalues - m[pick]))
				pick = i;
		if (pick < 0)
			break;
		prod = prod / m[pick] * (m[pick] + 1);
		m[pick]++;
	}
	for (c = 0; c < prod && k < budget; c++) {
		struct knob_config cfg;
		int rest = c;
		for (i = 0; i < s->sp.nknobs; i++) {
			cfg.idx[i] = grid_index(s->sp.knobs[i].nvalues, m[i], rest % m[i]);
			rest /= m[i];
		}
		tried[++k] = knobs_encode(&s->sp, &cfg);
		tally_measure(s, &t, tried[k]);
	}
	for (c = 0; c < s->sp.ncand; c++)
		order[c] = c;
	shuffle(order, s->sp.ncand);
	for (c = 0; c < s->sp.ncand && k < budget; c++) {
		if (t.n[order[c]])
			continue;
		tried[++k] = order[c];
		tally_measure(s, &t, tried[k]);
	}
	while (k < budget) { /* every config tried: re-measure the best */
		tried[++k] = tally_best(&t, s->sp.ncand);
		tally_measure(s, &t, tried[k]);
	}
	return tally_best(&t, s->sp.ncand);
}

/*
 * Successive halving with a budget: n0 random configs measured once, the
 * better half measured again (means over all their trials), and so on until
 * one is left; n0 is the largest whose rounds fit the budget, and what is
 * left over re-measures the survivors.  Returns the pick.
 */
static int run_halving(const struct surface *s, int budget, int *tried)
{
	static struct tally t;
	int cand[SPACE_MAX_CANDIDATES], n0 = 1, n, k = 0, i, j;

	memset(&t, 0, sizeof(t));
	for (n = 2; n <= s->sp.ncand; n++) {
		int cost = 0, r = n;
		while (r > 1) {
			cost += r;
			r = (r + 1) / 2;
		}
		cost += 1;
		if (cost <= budget)
			n0 = n;
	}
	for (i = 0; i < s->sp.ncand; i++)
		cand[i] = i;
	shuffle(cand, s->sp.ncand);
	n = n0;
	while (k < budget) {
		for (i = 0; i < n && k < budget; i++) {
			tried[++k] = cand[i];
			tally_measure(s, &t, cand[i]);
		}
		/* Sort the survivors by mean, best first, and keep the better half. */
		for (i = 1; i < n; i++)
			for (j = i; j > 0 && t.sum[cand[j]] / t.n[cand[j]] > t.sum[cand[j - 1]] / t.n[cand[j - 1]]; j--) {
				int x = cand[j];
				cand[j] = cand[j - 1];
				cand[j - 1] = x;
			}
		n = n > 1 ? (n + 1) / 2 : 1;
	}
	return cand[0];
}

/* ---- scoring ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double beats(const struct surface *s, int c)
{
	int i, n = 0;

	for (i = 0; i < s->sp.ncand; i++)
		n += s->value[i] < s->value[c];
	return (double)n / s->sp.ncand;
}

static void score(const struct surface *s, int method, int reps, struct result *res)
{
	int rec[MAX_K + 1], tried[MAX_K + 1], rep, k, b, kmax = s->kmax;
	double *k3 = calloc((size_t)reps, sizeof(double));

	memset(res, 0, sizeof(*res));
	for (rep = 0; rep < reps; rep++) {
		rng_state = 0x1234567ull * (uint64_t)(rep + 1) + (uint64_t)method * 7919u;
		if (method == M_TUNER || method == M_UCB)
			run_tuner(s, kmax, rec, tried, method == M_UCB ? LEARNER_UCB : LEARNER_EI);
		else if (method == M_RANDOM)
			run_random(s, kmax, rec, tried);
		else
			for (b = 1; b <= kmax; b++) /* budget-aware methods run once per budget */
				rec[b] = method == M_GRID ? run_grid(s, b, tried) : run_halving(s, b, tried);
		k3[rep] = kmax + 1;
		for (k = 1; k <= kmax; k++) {
			double sh = s->value[rec[k]] / s->best;
			res->share[k] += sh / reps;
			res->within[k] += (sh >= 0.97) / (double)reps;
			if (sh >= 0.97 && k3[rep] > kmax)
				k3[rep] = k;
			res->regret += (1.0 - s->value[tried[k]] / s->best) / reps;
		}
		res->beats += beats(s, rec[kmax]) / reps;
	}
	qsort(k3, (size_t)reps, sizeof(double), cmp_double);
	res->k3_median = reps % 2 ? k3[reps / 2] : 0.5 * (k3[reps / 2 - 1] + k3[reps / 2]);
	free(k3);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Share at budget k, where a surface smaller than k counts at its own largest budget. */
static double share_at(const struct surface *s, const struct result *r, int k)
{
	return r->share[k < s->kmax ? k : s->kmax];
}

static void print_surface(const struct surface *s, struct result res[METHODS])
{
	static const int show[] = { 1, 2, 3, 4, 6, 8, 12, 16, 24 };
	char buf[200];
	int m, i;

	knobs_config_text(&s->sp, knobs_prior_candidate(&s->sp), buf, sizeof(buf));
	printf("\n### %s\n\n%d candidates, noise %.0f%% per step and %.0f%% per run, target: within 3%% after %d trials; "
	       "prior pick %s (%.0f%% of the optimum)\n\n",
	       s->name, s->sp.ncand, 100 * s->step_sd, 100 * s->run_sd, s->target_k, buf,
	       100 * s->value[knobs_prior_candidate(&s->sp)] / s->best);
	printf("| method |");
	for (i = 0; i < (int)(sizeof(show) / sizeof(show[0])) && show[i] <= s->kmax; i++)
		printf(" k=%d |", show[i]);
	printf(" trials to 3%% (median) | regret over %d | beats |\n|---|", s->kmax);
	for (i = 0; i < (int)(sizeof(show) / sizeof(show[0])) && show[i] <= s->kmax; i++)
		printf("---|");
	printf("---|---|---|\n");
	for (m = 0; m < METHODS; m++) {
		printf("| %s |", method_names[m]);
		for (i = 0; i < (int)(sizeof(show) / sizeof(show[0])) && show[i] <= s->kmax; i++)
			printf(" %.3f |", res[m].share[show[i]]);
		if (res[m].k3_median > s->kmax)
			printf(" >%d |", s->kmax);
		else
			printf(" %.1f |", res[m].k3_median);
		printf(" %.2f | %.1f%% |\n", res[m].regret, 100 * res[m].beats);
	}
	printf("\nAt the target budget (%d trials): tuner %.3f of the optimum, best baseline %.3f.\n", s->target_k,
	       res[M_TUNER].share[s->target_k],
	       fmax(res[M_RANDOM].share[s->target_k], fmax(res[M_GRID].share[s->target_k], res[M_HALVING].share[s->target_k])));
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The cost of the daemon's hot path: a refit plus a recommendation, on a learner with kmax trials. */
static double refit_ms(const struct surface *s)
{
	struct learner *l = learner_new(&s->sp);
	struct knob_filter f;
	double m, v, t0, t1;
	int k, c;

	knobs_filter_all(&s->sp, &f);
	for (k = 0; k < s->kmax; k++) {
		c = learner_propose(l, &f);
		measure(s, c, &m, &v);
		learner_add(l, c, STEPS, m, v, false);
	}
	t0 = now_s();
	for (k = 0; k < 20; k++) {
		l->dirty = true;
		(void)learner_best(l, &f);
		(void)learner_gain(l, &f);
	}
	t1 = now_s();
	learner_free(l);
	return (t1 - t0) / 20 * 1000.0;
}

int main(int argc, char **argv)
{
	static struct surface surf[MAX_SURFACES];
	static struct result res[MAX_SURFACES][METHODS];
	int reps = 40, kcap = 16, ns = 0, i, m, k, opt;
	double v[MAX_SURFACES], worst_ms = 0.0;
	bool ahead = true;

	while ((opt = getopt(argc, argv, "r:k:")) != -1) {
		if (opt == 'r')
			reps = atoi(optarg);
		else if (opt == 'k')
			kcap = atoi(optarg) < MAX_K ? atoi(optarg) : MAX_K;
		else
			return 2;
	}
	for (i = optind; i < argc && ns < MAX_SURFACES; i++)
		if (surface_load(argv[i], &surf[ns]) == 0)
			ns++;
	if (ns == 0) {
		fprintf(stderr, "usage: bench_tuner [-r reps] [-k budget] surface.csv ...\n");
		return 2;
	}
	printf("## Per surface: mean share of the optimum reached by the recommendation after k trials (%d runs each)\n",
	       reps);
	for (i = 0; i < ns; i++) {
		surf[i].kmax = surf[i].sp.ncand < kcap ? surf[i].sp.ncand : kcap;
		if (surf[i].kmax < surf[i].target_k)
			surf[i].kmax = surf[i].target_k;
		for (m = 0; m < METHODS; m++)
			score(&surf[i], m, reps, &res[i][m]);
		print_surface(&surf[i], res[i]);
		double ms = refit_ms(&surf[i]);
		if (ms > worst_ms)
			worst_ms = ms;
	}
	printf("\n## Over all %d surfaces: median of the mean share of the optimum at budget k\n\n| method |", ns);
	for (k = 1; k <= kcap; k++)
		printf(" k=%d |", k);
	printf("\n|---|");
	for (k = 1; k <= kcap; k++)
		printf("---|");
	printf("\n");
	double med[METHODS][MAX_K + 1];
	for (m = 0; m < METHODS; m++) {
		printf("| %s |", method_names[m]);
		for (k = 1; k <= kcap; k++) {
			for (i = 0; i < ns; i++)
				v[i] = share_at(&surf[i], &res[i][m], k);
			med[m][k] = median(v, ns);
			printf(" %.3f |", med[m][k]);
		}
		printf("\n");
	}
	for (k = 1; k <= kcap; k++)
		for (m = M_RANDOM; m < METHODS; m++)
			if (med[M_TUNER][k] <= med[m][k])
				ahead = false;
	for (i = 0; i < ns; i++)
		v[i] = res[i][0].share[surf[i].target_k];
	printf("\nTarget budget (min(quarter of candidates, 12) trials per surface): median share %.3f "
	       "(target >= 0.970): %s\n", median(v, ns), median(v, ns) >= 0.97 ? "met" : "NOT met");
	for (m = 0; m < METHODS; m++) {
		for (i = 0; i < ns; i++)
			v[i] = res[i][m].share[surf[i].target_k];
		printf("- %s at the target budget: median share %.3f", method_names[m], median(v, ns));
		for (i = 0; i < ns; i++)
			v[i] = res[i][m].k3_median;
		printf(", median over surfaces of the median trials to within 3%%: %.1f\n", median(v, ns));
	}
	printf("\nTuner ahead of every baseline (random, grid, halving) at every budget 1..%d (median over surfaces): %s\n", kcap,
	       ahead ? "yes" : "NO");
	printf("Largest refit + recommendation time (learner with its trials): %.2f ms\n", worst_ms);
	for (i = 0; i < ns; i++)
		free(surf[i].value);
	return 0;
}
