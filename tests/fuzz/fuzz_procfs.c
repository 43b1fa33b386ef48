/*
 * libFuzzer target for the /proc parsers of collectors/procfs.c: the input
 * is taken as the text of a stat, /proc/stat, meminfo, loadavg, status,
 * cpu-list and environ file in turn.  Besides memory and UB errors it checks
 * what callers rely on: strings stay terminated inside their buffers and a
 * CPU list's count agrees with the mask built from it.
 */
#undef NDEBUG   /* the checks below are the point */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"

#define MASK_CPUS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_cpulist(const char *text)
{
	static unsigned char mask[MASK_CPUS];
	int count = procfs_cpulist_count(text), set = 0;

	assert(count >= -1);
	if (count < 0)
		return;
	/* A list that counts also builds a mask; duplicates count twice but set once. */
	assert(procfs_cpulist_mask(text, mask, MASK_CPUS) == 0);
	for (int i = 0; i < MASK_CPUS; i++)
		set += mask[i];
	assert(set <= count);
}

static void fuzz_status(const char *text)
{
	char buf[32];

	(void)procfs_status_int(text, "Threads");
	if (procfs_status_str(text, "Cpus_allowed_list", buf, sizeof(buf)) == 0)
		assert(strlen(buf) < sizeof(buf));
	if (procfs_status_str(text, "Name", buf, 1) == 0)
		assert(buf[0] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), value[16];
	struct procfs_stat st;
	struct procfs_cpu cpu;
	struct procfs_mem mem;
	struct procfs_load load;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (procfs_parse_stat(text, &st) == 0)
		assert(strlen(st.comm) < sizeof(st.comm));
	if (procfs_parse_cpu(text, &cpu) == 0)
		assert(cpu.ncpu >= 0);
	if (procfs_parse_meminfo(text, &mem) == 0)
		assert(mem.total_kb >= 0 && mem.free_kb >= 0);
	(void)procfs_parse_loadavg(text, &load);
	fuzz_status(text);
	fuzz_cpulist(text);
	/* environ blocks are NUL-separated and need not end in NUL: use the raw bytes. */
	if (procfs_environ_get((const char *)data, size, "SLURM_JOB_ID", value, sizeof(value)) == 0)
		assert(strlen(value) < sizeof(value));
	free(text);
	return 0;
}
