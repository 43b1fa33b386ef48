#!/bin/sh
# What the full suite needs from configure: a part configure did not find
# is not built, and the suites that test it cannot run.  Rather than let
# them drop out of the count, this suite fails, naming the package to
# install (scripts/deps.sh lists them all).  DLPROF_CONFIGURED comes from
# tests/local.mk: "cmocka=yes clang=clang spank=yes papi=yes likwid=yes".
# TAP output.
n=0
failed=0
found() { # key
	for kv in ${DLPROF_CONFIGURED:-}; do
		case $kv in
		"$1="?*) [ "${kv#*=}" != no ] && return 0 ;;
		esac
	done
	return 1
}
need() { # key, what it builds, the Debian package
	n=$((n + 1))
	if found "$1"; then
		echo "ok $n - $1: $2"
	else
		echo "not ok $n - $1: $2"
		echo "# configure did not find it: install $3 and run configure again"
		failed=1
	fi
}
echo "1..5"
need cmocka "the C unit suites are built" libcmocka-dev
need clang "the fuzz targets are built and fuzzed" clang
need spank "the Slurm SPANK plugin and its harness are built" libslurm-dev
need papi "the papi collector is built" libpapi-dev
need likwid "the likwid collector is built" likwid
exit $failed
