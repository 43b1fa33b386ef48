#!/bin/sh
# How `make check` runs every suite (the LOG_COMPILER of each kind in
# Makefile.am):
#
#   run_suite.sh [INTERPRETER...] SUITE
#
# Under a time limit: DLPROF_SUITE_LIMIT_S seconds (default 900).  A suite
# past it gets SIGTERM, with every process of its group (the daemons it
# started), SIGKILL 30 s later, and reads as "Bail out!": a hung test fails
# the run instead of hanging it.
#
# With the machine to itself when it judges the machine: a suite listed in
# DLPROF_SERIAL_TESTS (SERIAL_TESTS of the local.mk fragments: CPU shares,
# latencies, verdicts about load) takes the build tree's suite lock
# exclusively and every other suite takes it shared, so under `make -j` a
# serial suite never runs beside the fuzzers or another suite.  The wait for
# the lock does not count against the limit.
#
# Its last line is a TAP comment with the time it took.
set -u
for suite; do :; done
limit=${DLPROF_SUITE_LIMIT_S:-900}
lockdir=${DLPROF_BUILDDIR:-.}/tests
mkdir -p "$lockdir" || exit 99
mode=-s
for t in ${DLPROF_SERIAL_TESTS:-}; do
	case $suite in
	"$t" | */"$t") mode=-x ;;
	esac
done
# $1: the limit, $2: the suite, then the command.
flock "$mode" "$lockdir/.suite-lock" sh -c '
	limit=$1 suite=$2
	shift 2
	start=$(date +%s)
	timeout --kill-after=30 "$limit" "$@"
	rc=$?
	case $rc in
	124 | 137) echo "Bail out! $suite ran past its time limit of ${limit}s (DLPROF_SUITE_LIMIT_S)" ;;
	esac
	echo "# run_suite: $(($(date +%s) - start))s"
	exit $rc' sh "$limit" "$suite" "$@"
