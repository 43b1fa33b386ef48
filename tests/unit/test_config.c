/*
 * Configuration: defaults, the INI file, flags winning over it, repeated
 * listen addresses (IPv4 and IPv6), whether the socket was asked for,
 * errors that name the key, and what a reload may change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"
#include "log.h"

static char conf_path[64];

static void write_conf(const char *text)
{
	int fd;
	FILE *f;

	snprintf(conf_path, sizeof(conf_path), "/tmp/dlprof-conf-XXXXXX");
	fd = mkstemp(conf_path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
}

static enum config_result load(struct config **cfg, int argc, const char **argv)
{
	*cfg = NULL;
	return config_load(argc, (char **)argv, cfg);
}

static void test_defaults(void **state)
{
	const char *argv[] = {"dlprofd", "--config", "/dev/null"};
	struct config *cfg;

	(void)state;
	assert_int_equal(load(&cfg, 3, argv), CONFIG_OK);
	assert_int_equal(cfg->nlisten, 1);
	assert_string_equal(cfg->listen[0], "0.0.0.0:8080");
	assert_true(cfg->interval_s == 1.0);
	assert_true(cfg->store_interval_s == 10.0);
	assert_true(cfg->discovery_interval_s == 30.0);
	assert_int_equal(cfg->read_access, READ_ACCESS_ANY);
	assert_int_equal(cfg->max_samples, 10000);
	config_free(cfg);
}

static void test_file_then_flags(void **state)
{
	struct config *cfg;

	(void)state;
	write_conf("# comment\n[dlprofd]\ninterval = 0.25\ndb = /tmp/x.db\nlisten = 127.0.0.1:9000\n"
		   "listen = [::1]:9001\nlog_level = debug\n");
	const char *argv[] = {"dlprofd", "--config", conf_path, "--db", "/tmp/flag.db", "--foreground"};
	assert_int_equal(load(&cfg, 6, argv), CONFIG_OK);
	assert_true(cfg->interval_s == 0.25);
	assert_string_equal(cfg->db_path, "/tmp/flag.db");
	assert_int_equal(cfg->nlisten, 2);
	assert_string_equal(cfg->listen[1], "[::1]:9001");
	assert_int_equal(cfg->log_level, LOG_LEVEL_DEBUG);
	assert_true(cfg->foreground);
	config_free(cfg);
	unlink(conf_path);
}

static void test_flag_listen_replaces_file_listen(void **state)
{
	struct config *cfg;

	(void)state;
	write_conf("listen = 127.0.0.1:9000\n");
	const char *argv[] = {"dlprofd", "-c", conf_path, "--listen", "127.0.0.1:1", "--listen", "[::]:2"};
	assert_int_equal(load(&cfg, 7, argv), CONFIG_OK);
	assert_int_equal(cfg->nlisten, 2);
	assert_string_equal(cfg->listen[0], "127.0.0.1:1");
	assert_string_equal(cfg->listen[1], "[::]:2");
	config_free(cfg);
	unlink(conf_path);
}

/* Only a socket the file or a flag names is required (see server_options.socket_optional). */
static void test_socket_given(void **state)
{
	const char *plain[] = {"dlprofd", "--config", "/dev/null"};
	const char *flag[] = {"dlprofd", "--config", "/dev/null", "--socket", "/run/dlprofd/dlprofd.sock"};
	const char *file[] = {"dlprofd", "--config", conf_path};
	struct config *cfg;

	(void)state;
	assert_int_equal(load(&cfg, 3, plain), CONFIG_OK);
	assert_string_equal(cfg->socket_path, "/run/dlprofd/dlprofd.sock");
	assert_false(cfg->socket_given);
	config_free(cfg);
	assert_int_equal(load(&cfg, 5, flag), CONFIG_OK);
	assert_true(cfg->socket_given);
	config_free(cfg);
	write_conf("socket = /tmp/d.sock\n");
	assert_int_equal(load(&cfg, 3, file), CONFIG_OK);
	assert_true(cfg->socket_given);
	config_free(cfg);
	unlink(conf_path);
}

static void test_bad_values(void **state)
{
	static const char *const bad[][2] = {
		{"--interval", "0"}, {"--interval", "x"}, {"--listen", "8080"}, {"--listen", "[::1]8080"},
		{"--listen", "1.2.3.4:70000"}, {"--read-access", "all"}, {"--max-samples", "1.5"},
		{"--log-level", "loud"},
	};
	struct config *cfg;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[] = {"dlprofd", "--config", "/dev/null", bad[i][0], bad[i][1]};
		if (load(&cfg, 5, argv) != CONFIG_ERROR)
			fail_msg("accepted %s %s", bad[i][0], bad[i][1]);
	}
}

static void test_bad_file(void **state)
{
	struct config *cfg;
	const char *argv[] = {"dlprofd", "--config", conf_path};

	(void)state;
	write_conf("interval = 1\nno_such_key = 3\n");
	assert_int_equal(load(&cfg, 3, argv), CONFIG_ERROR);
	unlink(conf_path);
	/* A key an earlier release read loads, ignored: an upgrade keeps the node's daemon running. */
	write_conf("interval = 1\nexplore_share = 0.1\n");
	assert_int_equal(load(&cfg, 3, argv), CONFIG_OK);
	config_free(cfg);
	unlink(conf_path);
	write_conf("[other]\ninterval = 1\n");
	assert_int_equal(load(&cfg, 3, argv), CONFIG_ERROR);
	unlink(conf_path);
	/* A named file that does not exist is an error; the default path may be missing. */
	assert_int_equal(load(&cfg, 3, argv), CONFIG_ERROR);
}

static void test_unknown_option(void **state)
{
	const char *argv[] = {"dlprofd", "--config", "/dev/null", "--nope"};
	const char *argv2[] = {"dlprofd", "--config", "/dev/null", "stray"};
	struct config *cfg;

	(void)state;
	assert_int_equal(load(&cfg, 4, argv), CONFIG_ERROR);
	assert_int_equal(load(&cfg, 4, argv2), CONFIG_ERROR);
}

static void test_token_file(void **state)
{
	struct config *cfg;

	(void)state;
	write_conf("s3cret\nignored second line\n");
	char token_path[64];
	snprintf(token_path, sizeof(token_path), "%s", conf_path);
	const char *argv[] = {"dlprofd", "--config", "/dev/null", "--token-file", token_path};
	assert_int_equal(load(&cfg, 5, argv), CONFIG_OK);
	assert_string_equal(cfg->token, "s3cret");
	config_free(cfg);
	unlink(token_path);
}

/* Each enum key stores the value its name stands for, whichever way it came. */
static void test_enum_keys(void **state)
{
	static const struct {
		const char *flag, *name;
		int value;
	} cases[] = {
		{"--read-access", "any", READ_ACCESS_ANY},     {"--read-access", "local", READ_ACCESS_LOCAL},
		{"--read-access", "token", READ_ACCESS_TOKEN}, {"--log-level", "error", LOG_LEVEL_ERR},
		{"--log-level", "warning", LOG_LEVEL_WARNING}, {"--log-level", "debug", LOG_LEVEL_DEBUG},
	};
	struct config *cfg;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[] = {"dlprofd", "--config", "/dev/null", cases[i].flag, cases[i].name};
		assert_int_equal(load(&cfg, 5, argv), CONFIG_OK);
		if (strcmp(cases[i].flag, "--read-access") == 0)
			assert_int_equal(cfg->read_access, cases[i].value);
		else
			assert_int_equal(cfg->log_level, cases[i].value);
		config_free(cfg);
	}
}

/* The name tables read both ways, and nothing else is a name. */
static void test_enum_tables(void **state)
{
	const struct config_enum *tables[] = {config_read_access_names, config_log_level_names,
					      config_objective_names, config_cluster_updates_names,
					      config_job_state_names, config_job_filter_names};

	(void)state;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (const struct config_enum *e = tables[t]; e->name; e++) {
			assert_int_equal(config_enum_value(tables[t], e->name), e->value);
			assert_string_equal(config_enum_name(tables[t], e->value), e->name);
		}
		assert_int_equal(config_enum_value(tables[t], "ANY"), -1);
		assert_int_equal(config_enum_value(tables[t], NULL), -1);
		assert_null(config_enum_name(tables[t], 1000));
	}
	assert_int_equal(config_enum_value(config_objective_names, "goodput"), OBJECTIVE_GOODPUT);
	assert_int_equal(config_enum_value(config_objective_names, "latency"), -1);
	assert_int_equal(config_enum_value(config_cluster_updates_names, "poll"), CLUSTER_UPDATES_POLL);
	/* A job is running or ended; "all" only filters a list. */
	assert_int_equal(config_enum_value(config_job_state_names, "all"), -1);
	assert_int_equal(config_enum_value(config_job_filter_names, "ended"), JOB_FILTER_ENDED);
	assert_string_equal(config_enum_name(config_job_filter_names, JOB_FILTER_RUNNING),
			    config_enum_name(config_job_state_names, JOB_STATE_RUNNING));
	/* An objective's name read where it comes in: throughput when absent or unknown. */
	assert_int_equal(config_objective(NULL), OBJECTIVE_THROUGHPUT);
	assert_int_equal(config_objective("latency"), OBJECTIVE_THROUGHPUT);
	assert_int_equal(config_objective("efficiency"), OBJECTIVE_EFFICIENCY);
	assert_string_equal(config_objective_name(OBJECTIVE_GOODPUT), "goodput");
}

static void test_restart_keys(void **state)
{
	const char *a1[] = {"dlprofd", "--config", "/dev/null", "--interval", "1", "--db", "/a"};
	const char *a2[] = {"dlprofd", "--config", "/dev/null", "--interval", "2", "--db", "/b"};
	struct config *x, *y;
	char buf[128];

	(void)state;
	assert_int_equal(load(&x, 7, a1), CONFIG_OK);
	assert_int_equal(load(&y, 7, a2), CONFIG_OK);
	config_restart_keys(x, y, buf, sizeof(buf));
	/* interval is reloadable, db is not. */
	assert_string_equal(buf, "db");
	config_free(x);
	config_free(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_file_then_flags),
		cmocka_unit_test(test_flag_listen_replaces_file_listen),
		cmocka_unit_test(test_socket_given),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_bad_file),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_token_file),
		cmocka_unit_test(test_enum_keys),
		cmocka_unit_test(test_enum_tables),
		cmocka_unit_test(test_restart_keys),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
