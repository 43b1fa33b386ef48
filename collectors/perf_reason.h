/*
 * Reasons a person can act on when perf_event_open fails, derived from the
 * errno and the kernel's perf_event_paranoid setting.  Pure functions, so the
 * unavailable paths are tested without a kernel that refuses.
 */
#ifndef DLPROF_PERF_REASON_H
#define DLPROF_PERF_REASON_H

#include <limits.h>
#include <stddef.h>

/* perf_event_paranoid could not be read (-1 is a setting: no restrictions). */
#define PERF_PARANOID_UNKNOWN INT_MIN

/* Why software events cannot be opened at all; paranoid may be PERF_PARANOID_UNKNOWN. */
void perf_reason_open(int err, int paranoid, char *buf, size_t len);
/* Why hardware events cannot be opened; has_pmu: perf_core_pmu said so. */
void perf_reason_hw(int err, int has_pmu, char *buf, size_t len);
/*
 * Whether the kernel exposes a CPU PMU under sys_root/bus/event_source/devices:
 * "cpu" on x86, or any PMU of PERF_TYPE_RAW (ARM's armv8_pmuv3_0, Intel
 * hybrid's cpu_core).  VMs without a virtual PMU have none.
 */
int perf_core_pmu(const char *sys_root);

#endif
