#!/bin/sh
# Accounts for every suite of a `make check` run:
#
#   summary.sh BUILDDIR SUITE...
#
# SUITE is each entry of TESTS the run was given (`make list-tests`).  Each
# must have left its results (BUILDDIR/SUITE less .py/.sh/.mjs, plus .trs)
# with at least one test case: a suite that did not run (a file deleted, a
# build that failed), one that reported nothing, and one that skipped whole
# as "1..0" without listing the cases it skipped (tests/integration/harness.py
# and tests/browser/lib/tap.mjs list them: Tap(plan=N), skip_all) is a
# failure.  A case that failed while marked TODO (XFAIL) is a failure too:
# known-broken is not passing.
#
# Prints a line per problem, then "N passed, N failed, N skipped" for the
# run; exits 1 when anything failed.
set -u
build=$1
shift
passed=0 failed=0 skipped=0
problem() {
	echo "$1: $2"
	failed=$((failed + 1))
}
[ $# -gt 0 ] || problem "$build" "no suite to run: the test list is empty"
for suite; do
	base=$build/${suite%.py}
	case $suite in
	*.sh) base=$build/${suite%.sh} ;;
	*.mjs) base=$build/${suite%.mjs} ;;
	esac
	if [ ! -f "$base.trs" ]; then
		problem "MISSING" "$suite left no results in $build (it did not run)"
		continue
	fi
	read -r p s f e xf xp <<EOF
$(awk '$1 == ":test-result:" { n[$2]++ }
	END { printf "%d %d %d %d %d %d\n", n["PASS"], n["SKIP"], n["FAIL"], n["ERROR"], n["XFAIL"], n["XPASS"] }' \
		"$base.trs")
EOF
	passed=$((passed + p))
	skipped=$((skipped + s))
	failed=$((failed + f + e + xp))
	[ "$xf" -eq 0 ] || problem "XFAIL" "$suite: $xf failing cases marked TODO"
	if [ $((p + s + f + e + xf + xp)) -eq 0 ]; then
		problem "EMPTY" "$suite reported no test case"
	elif [ -f "$base.log" ] && grep -q '^1\.\.0' "$base.log"; then
		skipped=$((skipped - s))
		problem "EMPTY" "$suite skipped whole as 1..0 without listing its cases ($(sed -n 's/^1\.\.0 *# *SKIP *//p' "$base.log" | head -1))"
	fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
