/*
 * The straggler of a distributed job: which rank holds the others back,
 * by how much, and why where the daemon sees a cause.  Pure, like
 * diag_rules.h: a function from the ranks' figures (means per step, read
 * from their rows by diag_report.c) to a verdict; the unit tests feed
 * constructed ranks.
 *
 * In a synchronous job (data-parallel training: every step ends in a
 * collective) all ranks take the same step time, so step time cannot name
 * the slow one.  What differs is the time each waits in the collectives:
 * the straggler arrives last and waits least (only the transfer), the
 * others wait for it on top.  So a rank's own work per step is its step
 * time less its wait, and the straggler is the rank whose own work is
 * longest, when it is at least DIAG_STRAGGLER_RATIO times the other ranks'
 * median and they wait for it, beyond the straggler's own wait, at least
 * DIAG_STRAGGLER_WAIT_SHARE of each step.  The second condition is the one
 * that matters on a crowded node, where every rank's own work stretches
 * and ratios shrink toward 1; the first keeps a rank that merely waits a
 * little less (noise) from being named.
 *
 * When no rank timed its collectives (a job that reports steps but not
 * comm_wait_s), the same thresholds are applied to what the daemon reads
 * of the ranks' threads: the rank whose threads wait for a CPU (at least a
 * fifth of their runnable time, twice the others' share) while the
 * others keep fewer cores runnable (they sleep in the collective) is the
 * straggler, its cause a busy neighbour; runnable cores stand in for own
 * work, since every rank has the same work and the straggler never waits.
 */
#ifndef DLPROF_DIAG_STRAGGLER_H
#define DLPROF_DIAG_STRAGGLER_H

#include <stdbool.h>
#include <stddef.h>

/* The straggler's own work is at least this many times the other ranks' median ... */
#define DIAG_STRAGGLER_RATIO 1.2
/* ... and the other ranks wait at least this share of their steps for it. */
#define DIAG_STRAGGLER_WAIT_SHARE 0.15
/* Ranks with fewer steps reported are not judged yet. */
#define DIAG_STRAGGLER_MIN_STEPS 3

/* One rank's figures: means per step; NAN where not measured. */
struct diag_rank {
	int rank;
	const char *node;
	double steps;
	double step_s;             /* step time */
	double comm_s;             /* waiting in collectives */
	double data_s;             /* in data phases */
	double cpu_cores;          /* CPU its process used, in cores (the daemon's reading) */
	double wait_cores;         /* its threads runnable but waiting for a CPU, in cores */
};

/* What the daemon sees as the reason. */
enum diag_straggler_cause {
	DIAG_CAUSE_UNKNOWN,
	DIAG_CAUSE_DATA,           /* its data phase is longer */
	DIAG_CAUSE_NEIGHBOUR,      /* its threads wait for a CPU, the others' do not: something else runs there */
	DIAG_CAUSE_OVERSUBSCRIBED, /* every rank's threads wait for a CPU: more runnable threads than CPUs */
	DIAG_CAUSE_CPU_SHARE,      /* it gets fewer cores than the others without waiting: fewer threads or CPUs */
};

const char *diag_straggler_cause_name(enum diag_straggler_cause c);

struct diag_straggler {
	int rank;
	const char *node;          /* the rank's, as given */
	double slower;             /* its own work over the other ranks' median */
	double own_s, median_own_s;/* own work per step: the straggler's, the others' median */
	double others_wait_share;  /* the share of a step the other ranks (median) wait for it */
	enum diag_straggler_cause cause;
	bool from_cpu;             /* named from the CPU figures: no rank timed its collectives */
	char hint[512];
};

/*
 * Whether ranks r[0..n) have a straggler: fills out and returns true, or
 * false for a balanced job (or one with fewer than two judged ranks).
 */
bool diag_straggler_find(const struct diag_rank *r, size_t n, struct diag_straggler *out);

#endif
