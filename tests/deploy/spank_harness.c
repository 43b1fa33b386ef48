/*
 * The SPANK plugin's job-step path without Slurm: this program links
 * dlprof_spank.c with stand-ins for the few SPANK calls it makes, runs
 * slurm_spank_user_init as slurmstepd would for step 0 of job 4242, and
 * prints the variables the plugin set in the job, "NAME=value" per line.
 * SLURM_JOB_GPUS in its own environment goes into the job's.
 * tests/integration/test_env_paths.py compares them with the other paths.
 *
 * Usage: spank_harness URL MODE WORKLOAD  (MODE: recommend or tune)
 */
#include <slurm/spank.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HARNESS_VARS 64

/* The job's environment as the plugin sees and changes it. */
static struct {
	char name[128];
	char value[1024];
	int set_by_plugin;
} vars[HARNESS_VARS];
static int nvars;

static int find(const char *name)
{
	for (int i = 0; i < nvars; i++)
		if (strcmp(vars[i].name, name) == 0)
			return i;
	return -1;
}

static int put(const char *name, const char *value, int by_plugin)
{
	int i = find(name);

	if (i < 0) {
		if (nvars == HARNESS_VARS)
			return -1;
		i = nvars++;
	}
	snprintf(vars[i].name, sizeof(vars[i].name), "%s", name);
	snprintf(vars[i].value, sizeof(vars[i].value), "%s", value);
	vars[i].set_by_plugin = by_plugin;
	return 0;
}

void slurm_error(const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	fputs("# slurm_error: ", stderr);
	vfprintf(stderr, format, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void slurm_verbose(const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	fputs("# slurm_verbose: ", stderr);
	vfprintf(stderr, format, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int spank_remote(spank_t spank)
{
	(void)spank;
	return 1;
}

spank_context_t spank_context(void)
{
	return S_CTX_REMOTE;
}

spank_err_t spank_option_register(spank_t spank, struct spank_option *opt)
{
	(void)spank;
	(void)opt;
	return ESPANK_SUCCESS;
}

/* No --dlprof on the command line: the plugin's default= decides. */
spank_err_t spank_option_getopt(spank_t spank, struct spank_option *opt, char **optarg)
{
	(void)spank;
	(void)opt;
	(void)optarg;
	return ESPANK_ERROR;
}

spank_err_t spank_get_item(spank_t spank, spank_item_t item, ...)
{
	va_list ap;
	uint32_t *out;

	(void)spank;
	va_start(ap, item);
	out = va_arg(ap, uint32_t *);
	va_end(ap);
	if (item == S_JOB_ID)
		*out = 4242;
	else if (item == S_JOB_STEPID)
		*out = 0;
	else
		return ESPANK_BAD_ARG;
	return ESPANK_SUCCESS;
}

spank_err_t spank_getenv(spank_t spank, const char *var, char *buf, int len)
{
	int i = find(var);

	(void)spank;
	if (i < 0)
		return ESPANK_ENV_NOEXIST;
	snprintf(buf, (size_t)len, "%s", vars[i].value);
	return ESPANK_SUCCESS;
}

spank_err_t spank_setenv(spank_t spank, const char *var, const char *val, int overwrite)
{
	(void)spank;
	if (!overwrite && find(var) >= 0)
		return ESPANK_ENV_EXISTS;
	return put(var, val, 1) == 0 ? ESPANK_SUCCESS : ESPANK_ERROR;
}

int main(int argc, char **argv)
{
	char url[512], mode[64], timeout[] = "timeout=5";
	char *av[3] = {url, mode, timeout};

	if (argc != 4) {
		fprintf(stderr, "usage: %s URL recommend|tune WORKLOAD\n", argv[0]);
		return 2;
	}
	snprintf(url, sizeof(url), "url=%s", argv[1]);
	snprintf(mode, sizeof(mode), "default=%s", argv[2]);
	put("DLPROF_WORKLOAD", argv[3], 0);
	/* The GPUs of a Slurm allocation, when the test gives the step some. */
	if (getenv("SLURM_JOB_GPUS"))
		put("SLURM_JOB_GPUS", getenv("SLURM_JOB_GPUS"), 0);
	if (slurm_spank_user_init((spank_t)NULL, 3, av) != 0)
		return 1;
	for (int i = 0; i < nvars; i++)
		if (vars[i].set_by_plugin)
			printf("%s=%s\n", vars[i].name, vars[i].value);
	return 0;
}
