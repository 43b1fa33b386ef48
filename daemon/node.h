/*
 * This machine's description: hostname, CPU topology (sockets, physical
 * cores, SMT, NUMA domains), the CPUs this process may use, GPUs, and the
 * hardware class that workloads are keyed by.  Probed once at start from
 * /sys and /proc under configurable roots, so tests read fixture trees.
 */
#ifndef DLPROF_NODE_H
#define DLPROF_NODE_H

#include <jansson.h>
#include <stdbool.h>

#define NODE_MAX_NUMA 64

struct node_info {
	char hostname[256];
	char hw_class[128];          /* e.g. "x86_64-epyc-2c-1numa-0gpu" */
	char arch[32];               /* uname machine */
	char cpu_model[128];
	int sockets;
	int cores;                   /* physical cores, all sockets */
	int threads_per_core;
	int cpus_online;             /* logical CPUs online */
	int cpus_allowed;            /* logical CPUs this process may run on */
	int cores_allowed;           /* physical cores among them */
	char cpus_allowed_list[256]; /* e.g. "0-3,8" */
	int numa_nodes;
	int numa_cores[NODE_MAX_NUMA]; /* physical cores per NUMA domain */
	int gpus;                    /* NVIDIA GPUs found under /proc/driver/nvidia or /dev */
	long long mem_total_kb;
};

/* Probes the machine; roots are "/sys" and "/proc" outside tests. */
int node_probe(const char *sys_root, const char *proc_root, struct node_info *out);
/* A new JSON object for /api/v1/node (without collectors). */
json_t *node_json(const struct node_info *n);

#endif
