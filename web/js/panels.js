/*
 * Metric panels shared by the node and job pages: a card with one chart
 * whose series are the metric names that match the panel (fixed names or a
 * pattern), fetched downsampled for the page's time range.  A panel with no
 * matching series says why instead of drawing an empty frame.
 */
import { series } from './api.js';
import { Chart, joinSeries } from './charts.js';
import { h, replace } from './dom.js';
import * as fmt from './format.js';

/* Human labels of well-known series; others show their own name. */
const LABELS = {
	samples_per_s: 'samples/s',
	step_time_s: 'step time',
	loss: 'loss',
	'cpu.cores': 'cores used',
	'cpu.iowait_cores': 'iowait',
	'cpu.steal_cores': 'steal',
	'cpu.count': 'CPUs',
	'cpu.allowed': 'CPUs allowed',
	'cpu.thread_max_cores': 'busiest thread',
	'cpu.threads': 'threads',
	'cpu.busy_threads': 'busy threads',
	'cpu.processes': 'processes',
	'mem.rss_bytes': 'RSS',
	'mem.used_bytes': 'used',
	'mem.total_bytes': 'total',
	'load.1': 'load (1 min)',
	'sched.runnable': 'runnable tasks',
	'sched.switches_per_s': 'switches',
	'sched.wait_cores': 'waiting for a CPU',
	'perf.cpu_migrations_per_s': 'CPU migrations',
	'perf.ipc': 'IPC (perf)',
	'papi.ipc': 'IPC (PAPI)',
	'perf.llc_misses_per_s': 'LLC misses (perf)',
	'papi.cache_misses_per_s': 'cache misses (PAPI)',
	'gpu.util_percent': 'GPU %',
	'gpu.mem_bytes': 'GPU memory',
	'power.cpu_watts': 'CPU + DRAM',
	'energy.cpu_joules': 'CPU energy (J)',
	'energy.gpu_joules': 'GPU energy (J)',
};

/* Series that are a limit the others run against: drawn dashed and muted. */
const LIMITS = new Set(['cpu.count', 'cpu.allowed', 'mem.total_bytes']);

export function label(name) {
	if (LABELS[name])
		return LABELS[name];
	const g = /^gpu\.(\d+)\.(.+)$/.exec(name);
	if (g)
		return `GPU ${g[1]} ${g[2].replace(/_/g, ' ')}`;
	return name;
}

/* The formatter a series name suggests. */
/* The formatter a series name suggests: (value, tick increment or 0) -> text. */
export function formatter(name) {
	const n = (v, incr) => (incr ? fmt.tick(v, incr) : fmt.num(v));
	if (/bytes$/.test(name))
		return (v) => fmt.bytes(v);
	if (/_s$/.test(name) && !/per_s$/.test(name))
		return (v, incr) => n(v, incr) + ' s';
	if (/percent$/.test(name))
		return (v, incr) => n(v, incr) + ' %';
	return n;
}

/*
 * The series a panel shows as [{name, phase, label}]: fixed names first (in
 * order), then pattern matches; a perPhase panel shows its one name once
 * per phase of the job.
 */
function pick(spec, names, phases) {
	if (spec.perPhase)
		return names.has(spec.perPhase)
			? phases.slice(0, spec.max || 8).map((ph) => ({ name: spec.perPhase, phase: ph, label: ph })) : [];
	const out = [];
	for (const n of spec.names || [])
		if (names.has(n))
			out.push(n);
	if (spec.match)
		for (const n of [...names].sort())
			if (spec.match.test(n) && !out.includes(n))
				out.push(n);
	return out.slice(0, spec.max || 8).map((n) => ({ name: n, phase: null, label: label(n) }));
}

/*
 * A panel: spec {id, title, names?, match?, perPhase?, yMin?, note?(inline):
 * string, optional?}.  update(jobId, names, from, to, signal) draws the series among
 * names; an optional panel with none of them hides itself, and missing()
 * then says why (the note), for the page to list in one line.
 */
export class Panel {
	constructor(spec) {
		this.spec = spec;
		this.shown = '';
		this.chartEl = h('div', { class: 'chart', 'data-chart': spec.id });
		this.noteEl = h('p', { class: 'chart-note' });
		this.el = h('section', { class: 'card', 'data-testid': 'panel-' + spec.id },
			h('h2', {}, spec.title), this.chartEl, this.noteEl);
		this.chart = null;
	}

	async update(jobId, names, from, to, signal, phases = []) {
		const want = pick(this.spec, names, phases);
		this.el.hidden = !want.length && !!this.spec.optional;
		if (!want.length) {
			this.destroyChart();
			this.shown = '';
			const note = this.spec.note ? this.spec.note(true) : 'No samples yet.';
			replace(this.chartEl, h('p', { class: 'chart-note', 'data-testid': 'no-data' }, note));
			this.chartEl.dataset.points = '0';
			this.noteEl.textContent = '';
			return;
		}
		const got = await Promise.all(want.map((w) => series(jobId, w.name, from, to, signal, false, w.phase)));
		const key = want.map((w) => w.name + '/' + w.phase).join('\n');
		if (key !== this.shown) {
			this.destroyChart();
			this.shown = key;
			const f0 = this.spec.fmt || formatter(want[0].name);
			this.chart = new Chart(this.chartEl, {
				title: this.spec.title,
				name: this.spec.id,
				height: this.spec.height || 180,
				yMin: this.spec.yMin,
				yFmt: f0,
				series: want.map((w) => ({ label: w.label, fmt: formatter(w.name),
					...(LIMITS.has(w.name) ? { muted: true, extra: { dash: [5, 4], width: 1 } } : {}) })),
				xRange: () => [this.from, this.to],
			});
		}
		this.from = from;
		this.to = to;
		this.want = want;
		this.data = joinSeries(got);
		this.chart.set(this.data);
		this.noteEl.textContent = this.spec.caption || '';
	}

	/*
	 * A tick from the live stream ({t, values: {name: value}}): its values of
	 * the series shown join the chart at once, and the range slides to end
	 * at t.  The next update() redraws from the store.
	 */
	appendLive(t, values) {
		if (this.data && this.data.some((col) => !Array.isArray(col)))
			this.data = this.data.map((col) => Array.from(col));
		const d = this.data;
		if (!this.chart || !d || !d.length || !(t > (d[0].length ? d[0][d[0].length - 1] : -Infinity)))
			return;
		const row = this.want.map((w) => (w.phase === null && Number.isFinite(values[w.name]) ? values[w.name] : null));
		if (row.every((v) => v === null))
			return;
		d[0].push(t);
		row.forEach((v, i) => d[i + 1].push(v));
		if (t > this.to) {
			this.from += t - this.to;
			this.to = t;
		}
		this.chart.set(d);
	}

	missing() {
		return this.el.hidden && this.spec.note ? this.spec.note(false) : null;
	}

	retheme() {
		if (this.chart)
			this.chart.redraw(true);
	}

	destroyChart() {
		if (this.chart)
			this.chart.remove();
		this.chart = null;
	}
}
