/*
 * dlprofctl's goodput table (see ctl_goodput.h).  A config is shown by the
 * knobs in which the listed configs differ, so a batch knob is not lost
 * among the fixed ones.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ctl_format.h"
#include "ctl_goodput.h"
#include "ctl_table.h"

/* Whether key has the same value in every row's config. */
static bool same_everywhere(const json_t *rows, const char *key, const json_t *v)
{
	const json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
		if (!json_equal((json_t *)v, json_object_get(json_object_get(row, "config"), key)))
			return false;
	return true;
}

/* The knobs of config that differ between rows (all of them when there is one row): a new object. */
static json_t *varying(const json_t *rows, const json_t *config)
{
	json_t *out = json_object(), *v;
	const char *key;

	json_object_foreach((json_t *)config, key, v)
		if (json_array_size(rows) < 2 || !same_everywhere(rows, key, v))
			json_object_set(out, key, v);
	return out;
}

static const char *fmt_number(const json_t *v, const char *suffix, char *buf, size_t len)
{
	if (!json_is_number(v))
		return "-";
	/* Three significant digits, without an exponent for the thousands of samples/s. */
	snprintf(buf, len, fabs(json_number_value(v)) >= 1000.0 ? "%.0f%s" : "%.3g%s", json_number_value(v), suffix);
	return buf;
}

static const char *text_of(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "-";
}

void ctl_print_goodput(FILE *out, const json_t *gp)
{
	static const char *const hdr[] = {"CONFIG", "GLOBAL_BATCH", "SAMPLES/S", "EFFICIENCY", "RAW_SPEEDUP",
					  "LEARNING_SPEEDUP"};
	const json_t *rows = json_object_get(gp, "configs"), *base = json_object_get(gp, "baseline"), *row;
	struct ctl_table t;
	char phi[32], cfg[512];
	size_t i;

	if (!json_is_object(gp))
		return;
	fprintf(out, "\nlearning speed-up (Pollux goodput): noise scale %s from %s steps, ranked by %s\n",
		fmt_number(json_object_get(gp, "noise_scale"), "", phi, sizeof(phi)),
		ctl_fmt_scalar(json_object_get(gp, "noise_steps"), cfg, sizeof(cfg)),
		text_of(json_object_get(gp, "ranked_by")));
	if (json_string_value(json_object_get(gp, "note")))
		fprintf(out, "  %s\n", json_string_value(json_object_get(gp, "note")));
	if (json_is_object(json_object_get(base, "config"))) {
		json_t *shown = varying(rows, json_object_get(base, "config"));
		fprintf(out, "  baseline: %s (%s)\n", ctl_fmt_object(shown, cfg, sizeof(cfg)),
			text_of(json_object_get(base, "why")));
		json_decref(shown);
	}
	if (json_array_size(rows) == 0 || ctl_table_init(&t, 6, hdr) < 0)
		return;
	json_array_foreach(rows, i, row) {
		char b[32], s[32], e[32], r[32], l[32];
		json_t *shown = varying(rows, json_object_get(row, "config"));
		const char *cells[6] = {ctl_fmt_object(shown, cfg, sizeof(cfg)),
					fmt_number(json_object_get(row, "global_batch"), "", b, sizeof(b)),
					fmt_number(json_object_get(row, "samples_per_s"), "", s, sizeof(s)),
					fmt_number(json_object_get(row, "efficiency"), "", e, sizeof(e)),
					fmt_number(json_object_get(row, "raw_speedup"), "x", r, sizeof(r)),
					fmt_number(json_object_get(row, "learning_speedup"), "x", l, sizeof(l))};
		ctl_table_add(&t, cells);
		json_decref(shown);
	}
	fputc('\n', out);
	ctl_table_print(&t, out);
	ctl_table_free(&t);
}
