#!/bin/sh
# TAP suite for the libFuzzer targets (built by `make fuzz`).  For each
# target: one case replays the committed seed corpus and every regression
# input (tests/fuzz/regress/TARGET: inputs that once crashed), one case
# fuzzes for DLPROF_FUZZ_SECONDS (default 45), DLPROF_FUZZ_JOBS targets
# (default 2) at a time.  New corpus entries go to a temporary directory,
# never into the source tree; a crash's input is kept under
# $DLPROF_BUILDDIR/tests/fuzz/artifacts/ and printed in hex in the TAP
# diagnostics, ready to be committed as a regression input.
set -u
build=${DLPROF_BUILDDIR:-.}
src=${DLPROF_SRCDIR:-.}
secs=${DLPROF_FUZZ_SECONDS:-45}
jobs=${DLPROF_FUZZ_JOBS:-2}
targets="validate router config procfs cgroup series_codec"
# tmpfs when there is one (targets rewrite files per input); the targets'
# own temporary files go here too, so a crashed one leaves nothing behind.
work=$(mktemp -d /dev/shm/dlprof-fuzz-run-XXXXXX 2>/dev/null || mktemp -d /tmp/dlprof-fuzz-run-XXXXXX) || exit 1
TMPDIR=$work
export TMPDIR
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
n=0

tap() { # ok|"not ok", name, log file for the diagnostics
	n=$((n + 1))
	echo "$1 $n - $2"
	if [ "$1" != ok ] && [ -n "${3:-}" ] && [ -f "$3" ]; then
		tail -40 "$3" | sed 's/^/# /'
	fi
}

# Prints the hex of the crash inputs of target $1, and keeps them in the build tree.
show_artifacts() {
	for f in "$work/$1/art/"*; do
		[ -f "$f" ] || continue
		mkdir -p "$build/tests/fuzz/artifacts"
		cp "$f" "$build/tests/fuzz/artifacts/$1-$(basename "$f")"
		echo "# input kept as $build/tests/fuzz/artifacts/$1-$(basename "$f"); add it to tests/fuzz/regress/$1/:"
		od -An -tx1 "$f" | head -20 | sed 's/^/#  /'
	done
}

replay() { # target
	t=$1
	set --
	for f in "$src/tests/fuzz/corpus/$t/"* "$src/tests/fuzz/regress/$t/"*; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
	if [ $# -eq 0 ]; then
		tap "not ok" "fuzz_$t: no seed corpus in tests/fuzz/corpus/$t"
		return
	fi
	if "$build/tests/fuzz/fuzz_$t" -runs=1 -close_fd_mask=3 "$@" >"$work/$t.replay.log" 2>&1; then
		tap ok "fuzz_$t: $# committed inputs (seeds and regressions) replay clean"
	else
		tap "not ok" "fuzz_$t: a committed input fails" "$work/$t.replay.log"
	fi
}

fuzz_start() { # target: runs in the background, exit status into $work/$t.rc
	t=$1
	mkdir -p "$work/$t/new" "$work/$t/art"
	dict=""
	[ -f "$src/tests/fuzz/dict/$t.dict" ] && dict="-dict=$src/tests/fuzz/dict/$t.dict"
	regress=""
	[ -d "$src/tests/fuzz/regress/$t" ] && regress="$src/tests/fuzz/regress/$t"
	(
		# shellcheck disable=SC2086 # $dict and $regress are empty or one word
		"$build/tests/fuzz/fuzz_$t" $dict -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
			-max_len=4096 -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$work/$t/art/" \
			"$work/$t/new" "$src/tests/fuzz/corpus/$t" $regress >"$work/$t.fuzz.log" 2>&1
		echo $? >"$work/$t.rc"
	) &
}

fuzz_report() { # target
	t=$1
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.fuzz.log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' "$work/$t.fuzz.log" | tail -1)
	if [ "$(cat "$work/$t.rc" 2>/dev/null)" = 0 ]; then
		tap ok "fuzz_$t: ${secs}s of fuzzing found nothing (${runs:-?} runs, ${cov:-?} edges covered)"
	else
		tap "not ok" "fuzz_$t: fuzzing found a failure" "$work/$t.fuzz.log"
		show_artifacts "$t"
	fi
}

for t in $targets; do
	if [ ! -x "$build/tests/fuzz/fuzz_$t" ]; then
		echo "Bail out! $build/tests/fuzz/fuzz_$t is not built (make fuzz)"
		exit 1
	fi
done
for t in $targets; do
	replay "$t"
done
batch=""
count=0
for t in $targets; do
	fuzz_start "$t"
	batch="$batch $t"
	count=$((count + 1))
	if [ "$count" -ge "$jobs" ]; then
		wait
		for b in $batch; do fuzz_report "$b"; done
		batch=""
		count=0
	fi
done
wait
for b in $batch; do fuzz_report "$b"; done
echo "1..$n"
