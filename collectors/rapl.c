/*
 * The RAPL collector: the CPU packages' and memory's energy from the
 * kernel's powercap interface (<sys_root>/class/powercap/intel-rapl:N and
 * its subzones intel-rapl:N:M; AMD's RAPL shows there too).  Each zone's
 * energy_uj is a counter in microjoules that wraps at max_energy_range_uj;
 * per zone the collector emits the power over the tick and the joules since
 * it started counting (rapl.<zone>.power_watts, rapl.<zone>.energy_joules,
 * <zone> being the zone's name with its parent's: package_0, package_0.core,
 * package_0.dram, psys).
 *
 * Zones nest and overlap: psys (the platform) contains the packages, a
 * package contains its core and uncore (graphics) subzones, and DRAM is
 * apart from the package.  The node's CPU energy (energy.cpu_joules,
 * power.cpu_watts) is therefore the sum of the package zones and the DRAM
 * zones only, so nothing is counted twice.
 *
 * Since CVE-2020-8694 (Platypus) energy_uj is readable by root only on most
 * kernels; init says so, with what to do, rather than emit nothing.
 */

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "procfs.h"

#define RAPL_MAX_ZONES 32
#define RAPL_PREFIX "intel-rapl:"

struct rapl_zone {
	char dir[16];                  /* "intel-rapl:0:1" */
	char key[48];                  /* "package_0.core": the name in samples */
	int counted;                   /* a package or DRAM zone: part of the node's CPU energy */
	double range_uj;               /* max_energy_range_uj: where energy_uj wraps; 0 when unknown */
	uint64_t prev_uj;              /* energy_uj at the last read */
	double joules;                 /* since the collector started counting */
};

struct rapl_ctx {
	char root[512];                /* <sys_root>/class/powercap */
	struct rapl_zone zone[RAPL_MAX_ZONES];
	size_t nzones;
	double prev_mono;              /* the last sample's tick; 0: none yet */
	int counted;                   /* a package or DRAM zone reads: the node's CPU energy is measured */
	double node_joules;            /* the counted zones' joules since the first sample */
};

/* "intel-rapl:0" is a zone, "intel-rapl:0:1" a subzone of it; anything else (intel-rapl-mmio:0) is not ours. */
static int
rapl_zone_dir(const char *name, int *depth)
{
	const char *p = name + strlen(RAPL_PREFIX);
	int parts = 0;

	if (strncmp(name, RAPL_PREFIX, strlen(RAPL_PREFIX)) != 0 ||
	    strlen(name) >= sizeof(((struct rapl_zone *)0)->dir))
		return 0;
	while (*p != '\0') {
		if (*p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
		parts++;
		if (*p == ':')
			p++;
		else if (*p != '\0')
			return 0;
	}
	*depth = parts;
	return parts == 1 || parts == 2;
}

/* A zone's name as a sample name part: "package-0" becomes "package_0". */
static void
rapl_sanitize(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] != '\0' && in[i] != '\n' && i + 1 < len; i++) {
		char ch = in[i];
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		out[i] = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ? ch : '_';
	}
	out[i] = '\0';
}

static int
rapl_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rapl_zone *)a)->dir, ((const struct rapl_zone *)b)->dir);
}

/* Reads a zone's energy_uj; -1 with errno set. */
static int
rapl_read_uj(const struct rapl_ctx *c, const struct rapl_zone *z, uint64_t *uj)
{
	char buf[64], *end;
	unsigned long long v;

	if (procfs_readf(buf, sizeof(buf), "%s/%s/energy_uj", c->root, z->dir) < 0)
		return -1;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (end == buf || errno != 0) {
		errno = EINVAL;
		return -1;
	}
	*uj = v;
	return 0;
}

/* The joules between two reads of a counter that wraps at range_uj (0: unknown, a drop is then a reset). */
static double
rapl_delta_j(uint64_t prev, uint64_t cur, double range_uj)
{
	if (cur >= prev)
		return (double)(cur - prev) / 1e6;
	if (range_uj > (double)prev)
		return (range_uj - (double)prev + (double)cur) / 1e6;
	return 0;
}

/* Names the zones found in dir: a subzone takes its parent's name in front (package_0.dram). */
static void
rapl_name_zones(struct rapl_ctx *c)
{
	char buf[64], name[32];
	size_t i, k, plen;

	for (i = 0; i < c->nzones; i++) {
		struct rapl_zone *z = &c->zone[i];
		if (procfs_readf(buf, sizeof(buf), "%s/%s/name", c->root, z->dir) < 0 || buf[0] == '\0')
			snprintf(buf, sizeof(buf), "%s", z->dir + strlen(RAPL_PREFIX));
		rapl_sanitize(buf, name, sizeof(name));
		z->counted = strncmp(name, "package", 7) == 0 || strcmp(name, "dram") == 0;
		snprintf(z->key, sizeof(z->key), "%s", name);
		if (strchr(z->dir + strlen(RAPL_PREFIX), ':') == NULL)
			continue;
		/* Sorted by dir, so the parent ("intel-rapl:0") came first and is named. */
		plen = (size_t)(strrchr(z->dir, ':') - z->dir);
		for (k = 0; k < i; k++)
			if (strlen(c->zone[k].dir) == plen && strncmp(c->zone[k].dir, z->dir, plen) == 0) {
				snprintf(z->key, sizeof(z->key), "%.20s.%.20s", c->zone[k].key, name);
				/* A package's core and uncore are inside it; only its DRAM is apart. */
				z->counted = strcmp(name, "dram") == 0 && strncmp(c->zone[k].key, "package", 7) == 0;
			}
	}
}

/* Finds the zones; -1 with why when there are none. */
static int
rapl_discover(struct rapl_ctx *c, char *why, size_t why_len)
{
	struct dirent *e;
	int depth;
	DIR *d;

	if ((d = opendir(c->root)) == NULL) {
		snprintf(why, why_len, "no powercap interface (%s: %s): the kernel's intel_rapl driver is not loaded, "
			 "or this is a VM or a CPU without RAPL", c->root, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL && c->nzones < RAPL_MAX_ZONES)
		if (rapl_zone_dir(e->d_name, &depth))
			/* rapl_zone_dir checked the length. */
			memcpy(c->zone[c->nzones++].dir, e->d_name, strlen(e->d_name) + 1);
	closedir(d);
	if (c->nzones == 0) {
		snprintf(why, why_len, "no RAPL zone under %s (no intel-rapl:N): the CPU or the VM does not expose RAPL",
			 c->root);
		return -1;
	}
	qsort(c->zone, c->nzones, sizeof(c->zone[0]), rapl_cmp);
	rapl_name_zones(c);
	return 0;
}

/* Keeps the zones whose counter reads; -1 with why when none does. */
static int
rapl_probe(struct rapl_ctx *c, char *why, size_t why_len)
{
	char buf[64];
	size_t i, k;
	int err = 0;

	for (i = k = 0; i < c->nzones; i++) {
		struct rapl_zone *z = &c->zone[i];
		if (rapl_read_uj(c, z, &z->prev_uj) < 0) {
			err = errno;
			continue;
		}
		if (procfs_readf(buf, sizeof(buf), "%s/%s/max_energy_range_uj", c->root, z->dir) >= 0)
			z->range_uj = strtod(buf, NULL);
		c->zone[k++] = *z;
	}
	if (k == 0 && (err == EACCES || err == EPERM)) {
		snprintf(why, why_len, "%s/%s/energy_uj is readable by root only (since CVE-2020-8694): let dlprofd's "
			 "user read it (a udev rule or tmpfiles.d entry: chmod 0444 .../intel-rapl:*/energy_uj)",
			 c->root, c->zone[0].dir);
		return -1;
	}
	if (k == 0) {
		snprintf(why, why_len, "cannot read %s/%s/energy_uj: %s", c->root, c->zone[0].dir, strerror(err));
		return -1;
	}
	if (k < c->nzones)
		snprintf(why, why_len, "%zu of %zu RAPL zones unreadable (%s)", c->nzones - k, c->nzones,
			 strerror(err));
	c->nzones = k;
	for (i = 0; i < k; i++)
		c->counted |= c->zone[i].counted;
	/* psys alone holds more than the CPUs: the zones are shown, the node's CPU energy is not made up. */
	if (!c->counted)
		snprintf(why, why_len, "no package or DRAM zone readable: the node's CPU energy is not measured");
	return 0;
}

static void *
rapl_init(const struct collector_env *env, char *why, size_t why_len)
{
	struct rapl_ctx *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	why[0] = '\0';
	snprintf(c->root, sizeof(c->root), "%s/class/powercap", env->sys_root);
	if (rapl_discover(c, why, why_len) < 0 || rapl_probe(c, why, why_len) < 0) {
		free(c);
		return NULL;
	}
	return c;
}

static int
rapl_sample_node(void *ctx, struct collector_out *out, char *why, size_t why_len)
{
	struct rapl_ctx *c = ctx;
	double dt = c->prev_mono > 0 ? out->mono - c->prev_mono : 0, dj, node_dj = 0;
	uint64_t uj;
	size_t i;

	for (i = 0; i < c->nzones; i++) {
		struct rapl_zone *z = &c->zone[i];
		if (rapl_read_uj(c, z, &uj) < 0) {
			snprintf(why, why_len, "%s/%s/energy_uj: %s", c->root, z->dir, strerror(errno));
			/* The zones before it counted up to now; the failed one counts its span at its next read. */
			c->node_joules += node_dj;
			c->prev_mono = out->mono;
			return COLLECTOR_TRANSIENT;
		}
		/* The first sample sets the baseline: init's read may be long ago. */
		dj = c->prev_mono > 0 ? rapl_delta_j(z->prev_uj, uj, z->range_uj) : 0;
		z->prev_uj = uj;
		z->joules += dj;
		if (z->counted)
			node_dj += dj;
		collector_put(out, 0, z->joules, "rapl.%s.energy_joules", z->key);
		if (dt > 0)
			collector_put(out, 0, collector_resolved(dj / dt, 1e-6 / dt), "rapl.%s.power_watts", z->key);
	}
	c->node_joules += node_dj;
	if (c->counted)
		collector_put(out, 0, c->node_joules, "energy.cpu_joules");
	if (c->counted && dt > 0)
		collector_put(out, 0, collector_resolved(node_dj / dt, 1e-6 / dt), "power.cpu_watts");
	c->prev_mono = out->mono;
	return COLLECTOR_OK;
}

static json_t *
rapl_describe(void *ctx)
{
	struct rapl_ctx *c = ctx;
	json_t *zones = json_array();
	size_t i;

	for (i = 0; zones != NULL && i < c->nzones; i++)
		json_array_append_new(zones, json_pack("{s:s,s:s,s:b,s:f}", "zone", c->zone[i].key, "dir",
						       c->zone[i].dir, "in_node_total", c->zone[i].counted,
						       "max_energy_range_uj", c->zone[i].range_uj));
	return json_pack("{s:o*}", "zones", zones);
}

static void
rapl_fini(void *ctx)
{
	free(ctx);
}

const struct collector collector_rapl = {
	.version = COLLECTOR_VERSION,
	.name = "rapl",
	.init = rapl_init,
	.sample_node = rapl_sample_node,
	.sample_job = NULL,
	.job_gone = NULL,
	.describe = rapl_describe,
	.fini = rapl_fini,
};
