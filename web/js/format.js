/*
 * Turning API values into short readable text: numbers with sensible
 * precision, bytes, durations, times, and configs ("intra 4 · interop 2").
 * Pure functions; they return strings for text nodes, never markup.
 */

const SI = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M']];

export function num(v, digits = 3) {
	if (v === null || v === undefined || v === '' || !Number.isFinite(Number(v)))
		return '–';
	v = Number(v);
	const a = Math.abs(v);
	for (const [f, suffix] of SI)
		if (a >= f)
			return Number((v / f).toPrecision(digits)) + suffix;
	if (a !== 0 && a < 1e-3)
		return v.toExponential(2);
	if (Number.isInteger(v))
		return v.toLocaleString('en-US');
	return Number(v.toPrecision(digits)).toLocaleString('en-US', { maximumFractionDigits: 6 });
}

/* An axis tick: as many decimals as the distance between ticks needs, so ticks never read alike. */
export function tick(v, incr) {
	const a = Math.abs(incr);
	if (!Number.isFinite(v) || !a || Math.abs(v) >= 1e6 || a < 1e-6)
		return num(v);
	let d = 0;   /* the decimals the increment itself has: 2.5 needs one, 0.25 two */
	while (d < 6 && Math.abs(a * 10 ** d - Math.round(a * 10 ** d)) > 1e-6 * 10 ** d)
		d++;
	return v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

export function pct(v) {
	return Number.isFinite(v) ? (v * 100).toFixed(Math.abs(v) < 0.1 ? 1 : 0) + ' %' : '–';
}

/* Joules as J (kJ, MJ), or kWh from a tenth of one: energy bills speak kWh. */
export function energy(j) {
	if (j === null || j === undefined || !Number.isFinite(Number(j)))
		return '–';
	j = Number(j);
	if (Math.abs(j) >= 3.6e5)
		return num(j / 3.6e6) + ' kWh';
	if (Math.abs(j) >= 1e3)
		return num(j / 1e3) + ' kJ';
	return num(j) + ' J';
}

export function bytes(v) {
	if (!Number.isFinite(v))
		return '–';
	const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
	let i = 0;
	while (Math.abs(v) >= 1024 && i < units.length - 1) {
		v /= 1024;
		i++;
	}
	return (i ? v.toFixed(v < 10 ? 1 : 0) : String(v)) + ' ' + units[i];
}

export function duration(s) {
	if (!Number.isFinite(s) || s < 0)
		return '–';
	if (s < 60)
		return s.toFixed(s < 10 ? 1 : 0) + ' s';
	const m = Math.floor(s / 60);
	if (m < 60)
		return `${m} min ${Math.floor(s % 60)} s`;
	const hrs = Math.floor(m / 60);
	if (hrs < 48)
		return `${hrs} h ${m % 60} min`;
	return `${Math.floor(hrs / 24)} d ${hrs % 24} h`;
}

/* A unix time as local "YYYY-MM-DD HH:MM:SS"; today's times without the date. */
export function time(t) {
	if (!Number.isFinite(t) || t <= 0)
		return '–';
	const d = new Date(t * 1000);
	const p = (n) => String(n).padStart(2, '0');
	const hms = `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
	if (d.toDateString() === new Date().toDateString())
		return hms;
	return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${hms}`;
}

/* A unix time in UTC, "YYYY-MM-DD HH:MM:SS UTC": what hovering a local time shows. */
export function utc(t) {
	if (!Number.isFinite(t))
		return '';
	return new Date(t * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

/*
 * Seconds since a job's start, short enough for an axis: "+45 s", "+1:40"
 * (minutes and seconds), "+2:05:00" (hours); seconds are left out where
 * the ticks are whole minutes apart (incr).
 */
export function elapsed(s, incr = 1) {
	if (!Number.isFinite(s))
		return '–';
	const sign = s < 0 ? '−' : '+';
	const a = Math.abs(s), p = (n) => String(Math.floor(n)).padStart(2, '0');
	if (a < 60)
		return `${sign}${Number(a.toFixed(incr < 1 ? 1 : 0))} s`;
	if (a < 3600)
		return `${sign}${Math.floor(a / 60)}:${p(a % 60)}`;
	return `${sign}${Math.floor(a / 3600)}:${p((a % 3600) / 60)}${incr % 60 ? ':' + p(a % 60) : ''}`;
}

export function ago(t) {
	return Number.isFinite(t) ? duration(Date.now() / 1000 - t) + ' ago' : '–';
}

const SHORT = {
	intra_threads: 'intra',
	interop_threads: 'interop',
	dataloader_workers: 'workers',
	affinity: 'affinity',
	allocator: 'alloc',
	gpus: 'gpus',
};

export function knobName(k) {
	return SHORT[k] || k;
}

function scalar(v) {
	if (v === null || v === undefined)
		return '–';
	return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/* The knobs of a config, phases left out, in a stable order. */
export function knobs(config) {
	if (!config || typeof config !== 'object')
		return [];
	const order = Object.keys(SHORT);
	return Object.keys(config).filter((k) => k !== 'phases')
		.sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b))
		.map((k) => [k, config[k]]);
}

/* "intra 4 · interop 2 · workers 2"; keys limits the knobs shown. */
export function config(cfg, keys) {
	const list = knobs(cfg).filter(([k]) => !keys || keys.includes(k));
	if (!list.length)
		return '–';
	return list.map(([k, v]) => `${knobName(k)} ${scalar(v)}`).join(' · ');
}

/* A stable key of a config, to colour equal configs alike. */
export function configKey(cfg) {
	return JSON.stringify(knobs(cfg));
}

export function params(p) {
	if (!p || typeof p !== 'object' || !Object.keys(p).length)
		return '';
	return Object.keys(p).sort().map((k) => `${k}=${scalar(p[k])}`).join(', ');
}
