# The job diagnosis: sources that go into daemon/libdlprof.a, and its tests.
DIAG_SOURCES = \
	daemon/diag_rules.c daemon/diag_rules.h \
	daemon/diag_sustain.c daemon/diag_sustain.h \
	daemon/diag_report.c daemon/diag_report.h \
	daemon/diag_straggler.c daemon/diag_straggler.h \
	daemon/api_report.c

if HAVE_CMOCKA
DIAG_TESTS = tests/unit/test_diag_rules tests/unit/test_diag_straggler tests/unit/test_verdicts tests/unit/test_diag_report
check_PROGRAMS += $(DIAG_TESTS)
TESTS += $(DIAG_TESTS)
tests_unit_test_diag_rules_SOURCES = tests/unit/test_diag_rules.c
tests_unit_test_diag_rules_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_diag_rules_LDADD = $(UNIT_LDADD)
tests_unit_test_diag_straggler_SOURCES = tests/unit/test_diag_straggler.c
tests_unit_test_diag_straggler_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_diag_straggler_LDADD = $(UNIT_LDADD)
# Every verdict from collector fixtures through the store to the report: cannot skip.
tests_unit_test_verdicts_SOURCES = tests/unit/test_verdicts.c
tests_unit_test_verdicts_CFLAGS = $(UNIT_CFLAGS) $(PAPI_CFLAGS)
tests_unit_test_verdicts_LDADD = $(UNIT_LDADD)
# The report over a store seeded with a job's samples and ranks (diag_report.c).
tests_unit_test_diag_report_SOURCES = tests/unit/test_diag_report.c tests/unit/store_fixture.h
tests_unit_test_diag_report_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_diag_report_LDADD = $(UNIT_LDADD)
endif

# Real processes built to have each problem, against the real daemon.
TESTS += tests/integration/test_diagnosis.py
SERIAL_TESTS += tests/integration/test_diagnosis.py
EXTRA_DIST += tests/integration/test_diagnosis.py tests/integration/diag_jobs.py
