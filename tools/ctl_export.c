/*
 * The export command's request and output (see ctl_export.h).  Times are
 * parsed here, not by the daemon, so a relative "-2h" means two hours
 * before this machine's now, as a person typing it means.  A file is
 * written beside its final name and renamed into place, so a failed
 * export never leaves half a record where a whole one was.
 */
#include "ctl_export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ctl_export_time(const char *text, time_t now, double *out)
{
	static const struct {
		char unit;
		double s;
	} units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
	struct tm tm;
	char *end;
	double v;

	if (!text || !*text)
		return -1;
	if (text[0] == '-') {
		v = strtod(text + 1, &end);
		for (size_t i = 0; end != text + 1 && v >= 0 && i < sizeof(units) / sizeof(units[0]); i++)
			if (end[0] == units[i].unit && end[1] == '\0') {
				*out = (double)now - v * units[i].s;
				return 0;
			}
		return -1;
	}
	memset(&tm, 0, sizeof(tm));
	if (((end = strptime(text, "%Y-%m-%dT%H:%M:%SZ", &tm)) && !*end) ||
	    ((end = strptime(text, "%Y-%m-%dT%H:%MZ", &tm)) && !*end)) {
		*out = (double)timegm(&tm);
		return 0;
	}
	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !(v >= 0))
		return -1;
	*out = v;
	return 0;
}

int ctl_export_path(long long id, const struct ctl_export_opts *o, time_t now, char *buf, size_t len, char *why,
		    size_t why_len)
{
	double from = 0, to = 0, step = 0;
	size_t n;
	char *end;

	if (o->from && ctl_export_time(o->from, now, &from) < 0) {
		snprintf(why, why_len, "--from %s: unix seconds, -N[smhd] before now, or YYYY-MM-DDTHH:MM[:SS]Z", o->from);
		return -1;
	}
	if (o->to && ctl_export_time(o->to, now, &to) < 0) {
		snprintf(why, why_len, "--to %s: unix seconds, -N[smhd] before now, or YYYY-MM-DDTHH:MM[:SS]Z", o->to);
		return -1;
	}
	if (o->from && o->to && to < from) {
		snprintf(why, why_len, "--to %s is before --from %s", o->to, o->from);
		return -1;
	}
	if (o->step && ((step = strtod(o->step, &end)), end == o->step || *end || !(step > 0))) {
		snprintf(why, why_len, "--step %s: seconds a point, above 0", o->step);
		return -1;
	}
	n = (size_t)snprintf(buf, len, "/api/v1/jobs/%lld/record?format=%s", id, o->csv ? "csv" : "json");
	if (o->from && n < len)
		n += (size_t)snprintf(buf + n, len - n, "&from=%.3f", from);
	if (o->to && n < len)
		n += (size_t)snprintf(buf + n, len - n, "&to=%.3f", to);
	if (o->step && n < len)
		n += (size_t)snprintf(buf + n, len - n, "&step=%.6g", step);
	if (n >= len) {
		snprintf(why, why_len, "the request does not fit");
		return -1;
	}
	return 0;
}

int ctl_export_write(const struct ctl_export_opts *o, const char *body, size_t len, char *why, size_t why_len)
{
	char tmp[4096];
	size_t written;
	FILE *f;

	if (!o->output || strcmp(o->output, "-") == 0) {
		if (fwrite(body, 1, len, stdout) != len || fflush(stdout) != 0) {
			snprintf(why, why_len, "standard output: %s", strerror(errno));
			return -1;
		}
		return 0;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.part", o->output) >= sizeof(tmp)) {
		snprintf(why, why_len, "%s: the name is too long", o->output);
		return -1;
	}
	if (!(f = fopen(tmp, "w"))) {
		snprintf(why, why_len, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	written = fwrite(body, 1, len, f);
	if (fclose(f) != 0 || written != len) {
		snprintf(why, why_len, "%s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, o->output) < 0) {
		snprintf(why, why_len, "%s: %s", o->output, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
