/*
 * libFuzzer target for the configuration parser: the input is written to a
 * file and loaded with "dlprofd --config FILE", so inih's reader, the key
 * table, every value parser and the token file are exercised the way the
 * daemon reads /etc/dlprofd/dlprofd.conf.  A configuration that loads must
 * hold values inside the documented bounds.
 */
#undef NDEBUG   /* the checks below are the point */
#include <assert.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_path[256];

static void cleanup(void)
{
	unlink(fuzz_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd, null;

	(void)argc;
	(void)argv;
	/* $TMPDIR (run.sh's own directory, removed even after a crash), else tmpfs: rewritten per input. */
	snprintf(fuzz_path, sizeof(fuzz_path), "%s/dlprof-fuzz-config-XXXXXX",
		 getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/dev/shm");
	fd = mkstemp(fuzz_path);
	if (fd < 0) {
		snprintf(fuzz_path, sizeof(fuzz_path), "/tmp/dlprof-fuzz-config-XXXXXX");
		fd = mkstemp(fuzz_path);
	}
	assert(fd >= 0);
	close(fd);
	atexit(cleanup);
	/* "token_file = /dev/stdin" must not wait for a terminal. */
	null = open("/dev/null", O_RDONLY);
	assert(null >= 0);
	dup2(null, 0);
	close(null);
	return 0;
}

static void check_config(const struct config *cfg)
{
	assert(cfg->nlisten >= 1 && cfg->nlisten <= CONFIG_MAX_LISTEN);
	for (int i = 0; i < cfg->nlisten; i++)
		assert(strchr(cfg->listen[i], ':'));
	assert(cfg->interval_s >= 0.01 && cfg->interval_s <= 3600);
	assert(cfg->max_body_bytes >= 1024 && cfg->http_threads >= 1 && cfg->max_connections >= 1);
	assert(cfg->queue_limit >= 1 && cfg->connection_timeout_s >= 1);
	assert(config_enum_name(config_read_access_names, (int)cfg->read_access) != NULL);
	assert(config_enum_name(config_log_level_names, cfg->log_level) != NULL);
	assert(cfg->token && cfg->db_path && cfg->socket_path && cfg->web_root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[] = {(char *)"dlprofd", (char *)"--config", fuzz_path, NULL};
	struct config *cfg = NULL;
	FILE *f = fopen(fuzz_path, "w");

	assert(f);
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	if (config_load(3, argv, &cfg) == CONFIG_OK) {
		check_config(cfg);
		config_free(cfg);
	}
	return 0;
}
