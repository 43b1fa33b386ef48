/*
 * A job's share of the node's CPU energy.  RAPL measures packages, not
 * processes, so each tick's joules of the node's CPUs (energy.cpu_joules,
 * the rapl collector's) go to the jobs by their share of the CPU time busy
 * on the node in that tick (cpu.cores, the proc collector's): a job that
 * kept 4 of the node's 8 busy cores takes half the tick's joules.  This
 * combines two collectors' values, so it lives here, on the sampler's side,
 * not in a collector (collectors know nothing of each other).  GPU energy
 * is attributed in collectors/nvml.c, which holds both sides of its share.
 *
 * The model's limits: a core's joules are not equal (a core running AVX-512
 * draws more than one spinning; memory-bound work draws DRAM joules the CPU
 * time does not show); the packages' idle and uncore power is spread over
 * whatever is busy, so a lone job on an idle node carries the whole node;
 * the busy time of processes outside any job keeps its share for the node.
 *
 * Sampler thread only: no lock.
 */
#ifndef DLPROF_ENERGY_H
#define DLPROF_ENERGY_H

#include <stdint.h>

#include "collector.h"

struct energy_attr;

/* NULL when out of memory (logged). */
struct energy_attr *energy_attr_new(void);
void energy_attr_free(struct energy_attr *a);

/*
 * After every collector sampled the tick into out: adds to each job that has
 * cpu.cores in out its share of the node's energy.cpu_joules since the last
 * tick, and appends the job's total as energy.cpu_joules.  Does nothing
 * while the node's CPU energy is not measured.
 */
void energy_attr_tick(struct energy_attr *a, struct collector_out *out);

/* The job left: forget its total. */
void energy_attr_job_gone(struct energy_attr *a, int64_t job_id);

#endif
