/*
 * The sample rows every ingest benchmark writes, so the HTTP load generator
 * and the raw SQLite loop store exactly the same rows: the per-step metrics
 * the dlprof client sends (samples_per_s, step_time_s, loss, phase_time_s
 * with a phase), four rows per step, steps 10 ms apart.
 */
#ifndef DLPROF_BENCH_ROWS_H
#define DLPROF_BENCH_ROWS_H

#include <stddef.h>

struct bench_row {
	double t;            /* unix seconds */
	const char *name;
	double value;
	const char *phase;   /* NULL: none */
};

/* Row i of a batch whose first step ends at t0. */
static inline struct bench_row bench_row(size_t i, double t0)
{
	static const char *const names[] = {"samples_per_s", "step_time_s", "loss", "phase_time_s"};
	static const char *const phases[] = {"data", "forward", "backward"};
	struct bench_row r;

	r.t = t0 + (double)(i / 4) * 0.01;
	r.name = names[i % 4];
	r.value = 1.0 + (double)(i % 997) * 0.001;
	r.phase = i % 4 == 3 ? phases[(i / 4) % 3] : NULL;
	return r;
}

#endif
