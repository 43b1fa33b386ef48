-- wrk script of bench/load: GETs the daemon's read endpoints in turn and
-- sorts every answer into 2xx, a deliberate 503 with Retry-After, or
-- anything else; done() prints one "DLPROF ..." line that bench/load reads.
-- The paths come from DLPROF_LOAD_PATHS (comma-separated).

local paths = {}
for p in string.gmatch(os.getenv("DLPROF_LOAD_PATHS") or "/healthz", "[^,]+") do
	table.insert(paths, p)
end

local threads = {}

function setup(thread)
	thread:set("id", #threads)
	table.insert(threads, thread)
end

function init(args)
	ok, busy, other, other_status, i = 0, 0, 0, 0, id
end

function request()
	i = i + 1
	return wrk.format("GET", paths[(i % #paths) + 1])
end

function response(status, headers, body)
	if status >= 200 and status < 300 then
		ok = ok + 1
	elseif status == 503 and (headers["Retry-After"] or headers["retry-after"]) then
		busy = busy + 1
	else
		other = other + 1
		other_status = status
	end
end

function done(summary, latency, requests)
	local t = {ok = 0, busy = 0, other = 0, last = 0}
	for _, th in ipairs(threads) do
		t.ok = t.ok + th:get("ok")
		t.busy = t.busy + th:get("busy")
		t.other = t.other + th:get("other")
		if th:get("other_status") ~= 0 then
			t.last = th:get("other_status")
		end
	end
	local e = summary.errors
	io.write(string.format(
		"DLPROF requests=%d ok=%d busy=%d other=%d other_status=%d connect=%d read=%d write=%d timeout=%d " ..
		"status_errors=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d\n",
		summary.requests, t.ok, t.busy, t.other, t.last, e.connect, e.read, e.write, e.timeout, e.status,
		summary.duration, latency:percentile(50), latency:percentile(99), latency.max))
end
