/*
 * Implementation of node.h: reads the CPU topology from sysfs
 * (devices/system/cpu and devices/system/node), the CPUs this process may use
 * from proc's self/status, the CPU model and memory from procfs, and counts
 * NVIDIA GPUs from the driver's procfs entries.  The hardware class is
 * derived from these so jobs on alike machines share what they learn.
 */
#include "node.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "log.h"
#include "procfs.h"

#define NODE_MAX_CPUS 4096

/* Reads the first line of root/rel into buf; -1 if unreadable. */
static int read_line(const char *root, const char *rel, char *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Marks the CPUs of a list such as "0-3,8" in set; returns how many, or -1. */
static int parse_cpulist(const char *list, unsigned char *set, int max)
{
	int count = 0;

	if (procfs_cpulist_mask(list, set, max) < 0)
		return -1;
	for (int i = 0; i < max; i++)
		count += set[i] != 0;
	return count;
}

/* Finds "key<sep>value" in a proc file and copies the value. */
static int proc_field(const char *root, const char *rel, const char *key, char *buf, size_t len)
{
	char path[512], line[512];
	size_t klen = strlen(key);
	FILE *f;
	int r = -1;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *v;
		if (strncmp(line, key, klen) != 0)
			continue;
		v = line + klen;
		while (*v == ' ' || *v == '\t' || *v == ':')
			v++;
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

/* Physical core of each online CPU: (package, core_id) pairs, counted once. */
struct core_key {
	int package, core;
};

static int core_of(const char *sys_root, int cpu, struct core_key *k)
{
	char rel[128], buf[64];

	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
	if (read_line(sys_root, rel, buf, sizeof(buf)) < 0)
		return -1;
	k->package = atoi(buf);
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/core_id", cpu);
	if (read_line(sys_root, rel, buf, sizeof(buf)) < 0)
		return -1;
	k->core = atoi(buf);
	return 0;
}

/* Counts distinct physical cores among the CPUs in set. */
static int count_cores(const char *sys_root, const unsigned char *set, int *packages)
{
	struct core_key *seen = calloc(NODE_MAX_CPUS, sizeof(*seen));
	int nseen = 0, maxpkg = -1;

	if (!seen)
		return -1;
	for (int cpu = 0; cpu < NODE_MAX_CPUS; cpu++) {
		struct core_key k;
		int i;
		if (!set[cpu] || core_of(sys_root, cpu, &k) < 0)
			continue;
		for (i = 0; i < nseen; i++)
			if (seen[i].package == k.package && seen[i].core == k.core)
				break;
		if (i == nseen)
			seen[nseen++] = k;
		if (k.package > maxpkg)
			maxpkg = k.package;
	}
	free(seen);
	if (packages)
		*packages = maxpkg + 1;
	return nseen;
}

static void probe_numa(const char *sys_root, struct node_info *n)
{
	n->numa_nodes = 0;
	for (int node = 0; node < NODE_MAX_NUMA; node++) {
		char rel[96], list[1024];
		unsigned char set[NODE_MAX_CPUS] = {0};
		snprintf(rel, sizeof(rel), "devices/system/node/node%d/cpulist", node);
		if (read_line(sys_root, rel, list, sizeof(list)) < 0)
			continue;
		if (list[0] == '\0' || parse_cpulist(list, set, NODE_MAX_CPUS) <= 0)
			continue;   /* memory-only domain */
		n->numa_cores[n->numa_nodes++] = count_cores(sys_root, set, NULL);
	}
	if (n->numa_nodes == 0) {
		/* No NUMA in sysfs (kernels without it): one domain with every core. */
		n->numa_nodes = 1;
		n->numa_cores[0] = n->cores;
	}
}

static int count_gpus(const char *proc_root)
{
	char path[512];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/driver/nvidia/gpus", proc_root);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* A short family word from the CPU model, e.g. "epyc", "xeon". */
static void cpu_family_word(const char *model, char *out, size_t len)
{
	static const char *const words[] = {"epyc", "xeon", "ryzen", "threadripper", "core", "grace",
					    "neoverse", "power", "a64fx", NULL};
	char lower[128];
	size_t i;

	for (i = 0; model[i] && i < sizeof(lower) - 1; i++)
		lower[i] = (char)tolower((unsigned char)model[i]);
	lower[i] = '\0';
	for (i = 0; words[i]; i++) {
		if (strstr(lower, words[i])) {
			snprintf(out, len, "%s", words[i]);
			return;
		}
	}
	snprintf(out, len, "cpu");
}

int node_probe(const char *sys_root, const char *proc_root, struct node_info *n)
{
	unsigned char *online = calloc(NODE_MAX_CPUS, 1), *allowed = calloc(NODE_MAX_CPUS, 1);
	char list[1024], family[32], mem[64];
	struct utsname u;

	if (!online || !allowed) {
		free(online);
		free(allowed);
		return -1;
	}
	memset(n, 0, sizeof(*n));
	if (gethostname(n->hostname, sizeof(n->hostname) - 1) < 0)
		snprintf(n->hostname, sizeof(n->hostname), "localhost");
	snprintf(n->arch, sizeof(n->arch), "%.31s", uname(&u) == 0 ? u.machine : "unknown");
	if (proc_field(proc_root, "cpuinfo", "model name", n->cpu_model, sizeof(n->cpu_model)) < 0 &&
	    proc_field(proc_root, "cpuinfo", "Model", n->cpu_model, sizeof(n->cpu_model)) < 0)
		snprintf(n->cpu_model, sizeof(n->cpu_model), "unknown");
	if (proc_field(proc_root, "meminfo", "MemTotal", mem, sizeof(mem)) == 0)
		n->mem_total_kb = atoll(mem);

	if (read_line(sys_root, "devices/system/cpu/online", list, sizeof(list)) < 0 ||
	    (n->cpus_online = parse_cpulist(list, online, NODE_MAX_CPUS)) <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		log_warnx("node: cannot read %s/devices/system/cpu/online; assuming %ld CPUs", sys_root, c);
		n->cpus_online = c > 0 ? (int)c : 1;
		for (int i = 0; i < n->cpus_online && i < NODE_MAX_CPUS; i++)
			online[i] = 1;
	}
	n->cores = count_cores(sys_root, online, &n->sockets);
	if (n->cores <= 0) {
		n->cores = n->cpus_online;
		n->sockets = 1;
	}
	n->threads_per_core = n->cpus_online / n->cores > 0 ? n->cpus_online / n->cores : 1;

	if (proc_field(proc_root, "self/status", "Cpus_allowed_list", list, sizeof(list)) == 0 &&
	    (n->cpus_allowed = parse_cpulist(list, allowed, NODE_MAX_CPUS)) > 0) {
		snprintf(n->cpus_allowed_list, sizeof(n->cpus_allowed_list), "%.255s", list);
	} else {
		memcpy(allowed, online, NODE_MAX_CPUS);
		n->cpus_allowed = n->cpus_online;
		snprintf(n->cpus_allowed_list, sizeof(n->cpus_allowed_list), "0-%d", n->cpus_online - 1);
	}
	n->cores_allowed = count_cores(sys_root, allowed, NULL);
	if (n->cores_allowed <= 0)
		n->cores_allowed = n->cpus_allowed;
	probe_numa(sys_root, n);
	n->gpus = count_gpus(proc_root);

	cpu_family_word(n->cpu_model, family, sizeof(family));
	snprintf(n->hw_class, sizeof(n->hw_class), "%s-%s-%dc-%dnuma-%dgpu", n->arch, family, n->cores,
		 n->numa_nodes, n->gpus);
	free(online);
	free(allowed);
	return 0;
}

json_t *node_json(const struct node_info *n)
{
	json_t *numa = json_array();

	for (int i = 0; i < n->numa_nodes; i++)
		json_array_append_new(numa, json_pack("{s:i, s:i}", "id", i, "cores", n->numa_cores[i]));
	return json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:i, s:o, s:i, s:I}",
			 "hostname", n->hostname, "hw_class", n->hw_class, "arch", n->arch,
			 "cpu_model", n->cpu_model, "sockets", n->sockets, "cores", n->cores,
			 "threads_per_core", n->threads_per_core, "cpus_online", n->cpus_online,
			 "cpus_allowed", n->cpus_allowed, "cores_allowed", n->cores_allowed,
			 "cpus_allowed_list", n->cpus_allowed_list, "numa_nodes", n->numa_nodes,
			 "numa", numa, "gpus", n->gpus, "mem_total_kb", (json_int_t)n->mem_total_kb);
}
