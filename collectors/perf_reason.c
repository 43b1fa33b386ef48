/*
 * Turns perf_event_open failures into reasons a person can act on.  See
 * perf_reason.h.
 */

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_reason.h"
#include "procfs.h"

int
perf_core_pmu(const char *sys_root)
{
	char dir[512], buf[32];
	struct dirent *e;
	int found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/bus/event_source/devices", sys_root);
	if ((d = opendir(dir)) == NULL)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		found = strcmp(e->d_name, "cpu") == 0 ||
			(procfs_readf(buf, sizeof(buf), "%s/%s/type", dir, e->d_name) > 0 && atoi(buf) == PERF_TYPE_RAW);
	}
	closedir(d);
	return found;
}

void
perf_reason_open(int err, int paranoid, char *buf, size_t len)
{
	if (err == EACCES || err == EPERM) {
		/*
		 * The probe counts the daemon's own user space, which paranoid 2
		 * and below allow anyone: refused there, something else said no.
		 */
		if (paranoid > 2)
			snprintf(buf, len,
				 "perf_event_paranoid is %d: grant CAP_PERFMON to dlprofd or set "
				 "kernel.perf_event_paranoid to 2 or less",
				 paranoid);
		else if (paranoid != PERF_PARANOID_UNKNOWN)
			snprintf(buf, len,
				 "perf_event_open refused (%s) though perf_event_paranoid is %d, which allows it: "
				 "a seccomp filter (container runtimes block perf_event_open by default), the "
				 "container or an LSM (AppArmor, SELinux) denies it; allow perf_event_open there",
				 strerror(err), paranoid);
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
