#!/bin/sh
# A job that is not written in Python, reporting to dlprofd with curl: it
# registers, takes the thread count the daemon assigns, reports each step's
# time and throughput, and ends.  Every call has a short timeout and its
# failure is ignored, so the job runs the same with the daemon down.  Each
# batch carries its number (seq), so one sent again because its answer was
# lost would be stored once.
#
#   DLPROF_URL=http://127.0.0.1:8080 sh report-with-curl.sh [STEPS]
#   DLPROF_SOCKET=/run/dlprofd/dlprofd.sock sh report-with-curl.sh [STEPS]
set -u
steps=${1:-5}
if [ -n "${DLPROF_SOCKET:-}" ]; then
	base=http://localhost
	set -- --unix-socket "$DLPROF_SOCKET"
else
	base=${DLPROF_URL:-http://127.0.0.1:8080}
	set --
fi
# api METHOD PATH [JSON]: prints the answer, or nothing when there is none.
api() {
	curl -sf --max-time 2 "$@" 2>/dev/null
}
post() {
	api "$@" -X POST -H 'Content-Type: application/json'
}

# Register; the answer is {"id":N,"config":{...},...}.
answer=$(post "$@" "$base/api/v1/jobs" \
	-d "{\"workload\":\"my-solver\",\"params\":{\"n\":1024},\"pid\":$$}") || answer=
job=$(printf '%s' "$answer" | grep -o '"id": *[0-9]*' | head -n 1 | grep -o '[0-9]*$')
threads=$(printf '%s' "$answer" | grep -o '"intra_threads": *[0-9]*' | head -n 1 | grep -o '[0-9]*$')
if [ -n "$threads" ]; then
	export OMP_NUM_THREADS="$threads"
fi
echo "job ${job:-unregistered}, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"

i=0
while [ "$i" -lt "$steps" ]; do
	i=$((i + 1))
	start=$(date +%s.%N)
	sleep 0.1                      # the real work of one step goes here
	end=$(date +%s.%N)
	# One step: its time, the items it did (here 64), per second.
	body=$(awk -v s="$start" -v e="$end" -v seq="$i" 'BEGIN {
		d = e - s
		printf "{\"samples\":["
		printf "{\"t\":%.6f,\"name\":\"step_time_s\",\"value\":%.6f},", e, d
		printf "{\"t\":%.6f,\"name\":\"samples_per_s\",\"value\":%.3f},", e, 64 / d
		printf "{\"t\":%.6f,\"name\":\"phase_time_s\",\"value\":%.6f,\"phase\":\"solve\"}", e, d
		# The settings this step ran with, so the daemon credits them.
		if (ENVIRON["OMP_NUM_THREADS"] != "")
			printf "],\"config\":{\"intra_threads\":%d},\"seq\":%d}", ENVIRON["OMP_NUM_THREADS"], seq
		else
			printf "],\"config\":{},\"seq\":%d}", seq
	}')
	if [ -n "$job" ]; then
		post "$@" "$base/api/v1/jobs/$job/metrics" -d "$body" >/dev/null || true
	fi
done

if [ -n "$job" ]; then
	post "$@" "$base/api/v1/jobs/$job/end" -d '{"exit_status":0}' >/dev/null || true
fi
