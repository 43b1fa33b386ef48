/*
 * The diagnosis as text (see ctl_report.h).  Short lines a person reads at
 * the end of a job's output, as Princeton's jobstats prints them; figures
 * keep the names the JSON gives them, so a script can find them in either.
 */
#include "ctl_report.h"

#include <math.h>

#include "ctl_format.h"

static void
print_evidence(FILE *out, const json_t *figures)
{
	const char *name;
	json_t *v;
	double x;

	fputs("    evidence:", out);
	json_object_foreach((json_t *)figures, name, v) {
		x = json_number_value(v);
		/* Bytes and rates run large: %g keeps them short. */
		if (fabs(x) >= 1e5)
			fprintf(out, " %s=%.3g", name, x);
		else
			fprintf(out, " %s=%.2f", name, x);
	}
	fputc('\n', out);
}

static void
print_verdict(FILE *out, const json_t *v)
{
	char since[32], until[32];
	const json_t *fix = json_object_get(v, "fix");

	ctl_fmt_time(json_object_get(v, "since"), since, sizeof(since));
	if (json_is_true(json_object_get(v, "active")))
		fprintf(out, "  %s, since %s\n", json_string_value(json_object_get(v, "kind")), since);
	else
		fprintf(out, "  %s, %s to %s\n", json_string_value(json_object_get(v, "kind")), since,
			ctl_fmt_time(json_object_get(v, "until"), until, sizeof(until)));
	fprintf(out, "    %s\n", json_string_value(json_object_get(v, "hint")));
	if (json_is_object(fix))
		fprintf(out, "    fix: %s\n", json_string_value(json_object_get(fix, "text")));
	print_evidence(out, json_object_get(json_object_get(v, "evidence"), "figures"));
}

/*
 * "energy: joules=... (... kWh) cpu_joules=... gpu_joules=... samples_per_joule=...",
 * then each figure not measured with why.
 */
static void
print_energy(FILE *out, const json_t *e)
{
	static const char *const keys[] = {"cpu_joules", "gpu_joules", "samples_per_joule"};
	static const char *const why_keys[] = {"cpu", "gpu", "samples_per_joule"};
	const json_t *why = json_object_get(e, "unavailable");
	size_t i;

	if (!json_is_object(e))
		return;
	fputs("  energy:", out);
	if (json_is_number(json_object_get(e, "joules")))
		fprintf(out, " joules=%.6g (%.3g kWh)", json_number_value(json_object_get(e, "joules")),
			json_number_value(json_object_get(e, "kwh")));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_is_number(json_object_get(e, keys[i])))
			fprintf(out, " %s=%.6g", keys[i], json_number_value(json_object_get(e, keys[i])));
	fputc('\n', out);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_is_string(json_object_get(why, why_keys[i])))
			fprintf(out, "    %s not measured: %s\n", keys[i],
				json_string_value(json_object_get(why, why_keys[i])));
}

void
ctl_print_report(FILE *out, const json_t *report)
{
	const json_t *verdicts = json_object_get(report, "verdicts"), *v;
	char from[32], to[32];
	size_t i;

	fprintf(out, "dlprof diagnosis of job %lld (%s), %s, %s to %s\n",
		(long long)json_integer_value(json_object_get(report, "job")),
		json_string_value(json_object_get(report, "workload")),
		json_string_value(json_object_get(report, "state")),
		ctl_fmt_time(json_object_get(report, "from"), from, sizeof(from)),
		ctl_fmt_time(json_object_get(report, "to"), to, sizeof(to)));
	if (json_array_size(verdicts) == 0)
		fprintf(out, "  %s\n", json_string_value(json_object_get(report, "headline")));
	json_array_foreach((json_t *)verdicts, i, v)
		print_verdict(out, v);
	json_array_foreach(json_object_get(report, "undecided"), i, v)
		fprintf(out, "  note: %s\n", json_string_value(v));
	print_energy(out, json_object_get(report, "energy"));
}
