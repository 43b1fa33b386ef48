/*
 * The sustain rule that keeps verdicts from flapping: a condition must hold
 * for a sustained span before its verdict starts, and be absent for as long
 * before the verdict ends; one sample either way changes nothing.  One
 * state per kind of verdict, stepped window by window.  Pure.
 */
#ifndef DLPROF_DIAG_SUSTAIN_H
#define DLPROF_DIAG_SUSTAIN_H

#include <stdbool.h>

struct diag_sustain {
	bool on;                   /* the verdict holds */
	bool run;                  /* a run of the opposite state is under way */
	double run_since;          /* when that run began */
	double since;              /* on: when the verdict's condition began to hold */
};

enum diag_sustain_event { DIAG_SUSTAIN_NONE, DIAG_SUSTAIN_START, DIAG_SUSTAIN_END };

/*
 * Steps st over the window [t0, t1] in which the condition held (cond) or
 * did not (including: could not be told).  Returns START when the verdict
 * starts (st->since is when its run began) and END when it ends (*until:
 * when the condition stopped holding).
 */
enum diag_sustain_event diag_sustain_step(struct diag_sustain *st, double t0, double t1, bool cond,
					  double sustain_s, double *until);

#endif
