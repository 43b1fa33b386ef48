/*
 * The daemon's JSON API as the pages use it: one fetch helper that turns
 * error bodies ({"error","detail"}) into exceptions, a series loader that
 * always asks for downsampled points, and small normalisers so pages read
 * one shape whatever optional fields an answer carries.
 */

export class ApiError extends Error {
	constructor(status, short, detail) {
		super(detail || short || `HTTP ${status}`);
		this.status = status;
		this.short = short;
	}
}

export async function api(path, signal) {
	let resp;
	try {
		resp = await fetch('api/v1/' + path, { signal, headers: { Accept: 'application/json' }, cache: 'no-store' });
	} catch (e) {
		if (e.name === 'AbortError')
			throw e;
		throw new ApiError(0, 'unreachable', 'the daemon did not answer: ' + e.message);
	}
	let body = null;
	try {
		body = await resp.json();
	} catch {
		body = null;
	}
	if (!resp.ok)
		throw new ApiError(resp.status, body && body.error, body && body.detail);
	return body;
}

/* The array in a list answer, whether it is bare or wrapped ({"jobs": [...]}). */
export function list(body, key) {
	if (Array.isArray(body))
		return body;
	return (body && Array.isArray(body[key])) ? body[key] : [];
}

/*
 * A query string from [key, value] pairs, encoded with encodeURIComponent
 * (%20, not '+', so it reads the same to every server and in a shell line).
 */
export function query(pairs) {
	return [...pairs].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&');
}

/* Points wanted per chart; the daemon caps a series near 1000. */
const POINTS = 600;

/* Whole seconds per point for a span, so buckets stay aligned between polls. */
export function stepFor(from, to) {
	return Math.max(1, Math.ceil((to - from) / POINTS));
}

/*
 * One series of a job (0: the node) between from and to (unix seconds),
 * downsampled to about POINTS points, or to the daemon's own cap when
 * coarse is set (the span is not known yet); of one phase when phase is
 * given (phase_time_s).  Returns {name, unit, xs, ys};
 * a series with no samples has empty arrays, an unknown name too.
 */
export async function series(jobId, name, from, to, signal, coarse, phase) {
	const q = [['name', name], ['from', Math.floor(from)], ['to', Math.ceil(to)]];
	if (!coarse)
		q.push(['step', stepFor(from, to)]);
	if (phase)
		q.push(['phase', phase]);
	let body;
	try {
		body = await api(`jobs/${encodeURIComponent(jobId)}/series?${query(q)}`, signal);
	} catch (e) {
		if (e instanceof ApiError && e.status === 404)
			return { name, unit: '', xs: [], ys: [] };
		throw e;
	}
	const pts = (body && body.points) || [];
	const xs = [], ys = [];
	for (const p of pts) {
		const t = Array.isArray(p) ? p[0] : p.t;
		const v = Array.isArray(p) ? p[1] : p.value ?? p.v;
		if (Number.isFinite(t) && (v === null || Number.isFinite(v))) {
			xs.push(t);
			ys.push(v);
		}
	}
	return { name, unit: (body && body.unit) || '', xs, ys };
}

/*
 * A job's latest samples as a Map name -> {t, value}.  Accepts
 * {name: value}, {name: {t, value}} and [{name, t, value}].
 */
export function latestMap(latest) {
	const m = new Map();
	if (Array.isArray(latest)) {
		for (const s of latest)
			if (s && s.name !== undefined)
				m.set(s.name, { t: s.t, value: s.value });
	} else if (latest && typeof latest === 'object') {
		for (const [k, v] of Object.entries(latest))
			m.set(k, v && typeof v === 'object' ? { t: v.t, value: v.value } : { t: undefined, value: v });
	}
	return m;
}

/* A parsed JSON field: the API may give an object or its JSON text. */
export function obj(v) {
	if (typeof v === 'string') {
		try {
			return JSON.parse(v);
		} catch {
			return null;
		}
	}
	return v ?? null;
}

/* A trial with std computed from m2 when the answer has only Welford's sums. */
export function trial(t) {
	const n = Number(t.n) || 0;
	let std = t.std ?? t.stddev;
	if (std === undefined && Number.isFinite(t.m2) && n > 1)
		std = Math.sqrt(t.m2 / (n - 1));
	return {
		phase: t.phase || '',
		config: obj(t.config) || {},
		n,
		mean: t.mean,
		std,
		start: t.t_start ?? t.start,
		end: t.t_end ?? t.end ?? null,
	};
}

const LOOKBACK_S = 86400;   /* samples this long before registration still count as the job's */
const SKEW_S = 300;         /* and this far ahead of the daemon's clock (the ingest limit) */

/*
 * The time of a job's first throughput sample when it precedes the job's
 * registration (clock skew, a job found late), else its start; null while
 * it has none.  A coarse look over a day gives the bucket; a fine look at
 * that bucket the sample.
 */
export async function firstSample(id, started, signal) {
	const from = started - LOOKBACK_S, to = Date.now() / 1000 + SKEW_S;
	const coarse = await series(id, 'samples_per_s', from, to, signal, true);
	if (!coarse.xs.length)
		return null;
	const bucket = (to - from) / 500;   /* wider than the daemon's own buckets (it keeps ~1000) */
	if (coarse.xs[0] - bucket >= started)
		return started;
	const fine = await series(id, 'samples_per_s', coarse.xs[0] - bucket, coarse.xs[0] + bucket, signal);
	return fine.xs[0] ?? coarse.xs[0] - bucket;
}
