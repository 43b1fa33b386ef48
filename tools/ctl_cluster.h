/*
 * The text form of the cluster view (GET /api/v1/cluster/workloads[/NAME])
 * as `dlprofctl cluster [WORKLOAD]` prints it: the link to the shared store
 * in one line, then one row per workload variant with its hardware class,
 * nodes, jobs, trials and best config.
 */
#ifndef DLPROF_CTL_CLUSTER_H
#define DLPROF_CTL_CLUSTER_H

#include <jansson.h>
#include <stdio.h>

/* 0, or -1 when the answer is not what the API promises. */
int ctl_print_cluster(FILE *out, const json_t *answer);

#endif
