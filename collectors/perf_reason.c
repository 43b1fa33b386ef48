/*
 * Turns perf_event_open failures into reasons a person can act on.  See
 * perf_reason.h.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perf_reason.h"

void
perf_reason_open(int err, int paranoid, char *buf, size_t len)
{
	if (err == EACCES || err == EPERM) {
		if (paranoid >= 0)
			snprintf(buf, len,
				 "perf_event_paranoid is %d: grant CAP_PERFMON to dlprofd or set "
				 "kernel.perf_event_paranoid to 2 or less",
				 paranoid);
		else
			snprintf(buf, len, "perf_event_open refused (%s): grant CAP_PERFMON to dlprofd", strerror(err));
	} else if (err == ENOSYS || err == ENOENT) {
		snprintf(buf, len, "perf_event_open is not supported by this kernel (CONFIG_PERF_EVENTS)");
	} else if (err == EMFILE || err == ENFILE) {
		snprintf(buf, len, "out of file descriptors: raise LimitNOFILE for dlprofd");
	} else {
		snprintf(buf, len, "perf_event_open failed: %s", strerror(err));
	}
}

void
perf_reason_hw(int err, int has_pmu, char *buf, size_t len)
{
	if (!has_pmu)
		snprintf(buf, len, "hardware events unavailable: no PMU (no /sys/bus/event_source/devices/cpu; "
				   "VMs often hide it)");
	else if (err == ENOENT || err == EOPNOTSUPP)
		snprintf(buf, len, "hardware events unavailable: the PMU does not support cycles (%s)", strerror(err));
	else if (err == EACCES || err == EPERM)
		snprintf(buf, len, "hardware events refused (%s): grant CAP_PERFMON to dlprofd", strerror(err));
	else
		snprintf(buf, len, "hardware events unavailable: %s", strerror(err));
}
