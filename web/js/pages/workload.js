/*
 * One workload's learned surface: the objective of each tried config
 * against intra-op threads (or the knob with most values), one line per
 * value of the other knobs, error bars of one standard deviation, the best
 * and the default marked; then the recommendation with its confidence and
 * gain, and the prologue line that applies it to a job script.
 */
import { api, obj, ApiError } from '../api.js';
import { Chart, surfacePlugin } from '../charts.js';
import { h, replace, card, facts, table, empty, command, link, badge } from '../dom.js';
import * as fmt from '../format.js';

/* Tried configs as [{phase, config, mean, std, n, predicted}], whatever the answer calls them. */
function tried(w) {
	const list = w.configs || w.tried || w.surface || w.trials || [];
	return list.map((c) => ({
		phase: c.phase || '',
		config: obj(c.config) || {},
		mean: c.mean,
		std: c.std ?? c.stddev,
		n: c.n ?? c.count,
		predicted: c.predicted ?? c.prediction,
	})).filter((c) => Number.isFinite(c.mean));
}

/* The knob for the x axis: intra_threads if tried, else the numeric knob with most values. */
function xKnob(points) {
	const values = new Map();
	for (const p of points)
		for (const [k, v] of fmt.knobs(p.config))
			if (typeof v === 'number')
				(values.get(k) || values.set(k, new Set()).get(k)).add(v);
	if (values.has('intra_threads'))
		return 'intra_threads';
	let best = null;
	for (const [k, s] of values)
		if (!best || s.size > values.get(best).size)
			best = k;
	return best;
}

/* uPlot data, series and marks for one phase's points. */
function surface(points, xk, bestCfg, dfltCfg) {
	const groups = new Map();
	for (const p of points) {
		const rest = Object.fromEntries(fmt.knobs(p.config).filter(([k]) => k !== xk));
		const key = fmt.config(rest);
		if (!groups.has(key))
			groups.set(key, []);
		groups.get(key).push(p);
	}
	const xs = [...new Set(points.map((p) => p.config[xk]))].sort((a, b) => a - b);
	const data = [xs];
	const series = [];
	const marks = { bars: [], best: null, dflt: null };
	const bestKey = bestCfg ? fmt.configKey(bestCfg) : null;
	const dfltKey = dfltCfg ? fmt.configKey(dfltCfg) : null;
	for (const [key, ps] of groups) {
		const si = data.length;
		const ys = xs.map((x) => {
			const p = ps.find((q) => q.config[xk] === x);
			return p ? p.mean : null;
		});
		for (const p of ps) {
			if (Number.isFinite(p.std) && p.std > 0)
				marks.bars.push([p.config[xk], p.mean - p.std, p.mean + p.std, si]);
			const k = fmt.configKey(p.config);
			if (k === bestKey)
				marks.best = [p.config[xk], p.mean];
			if (k === dfltKey)
				marks.dflt = [p.config[xk], p.mean];
		}
		data.push(ys);
		series.push({ label: groups.size > 1 ? key : 'measured' });
	}
	return { data, series, marks };
}

function pointsTable(points, bestCfg) {
	const bestKey = bestCfg ? fmt.configKey(bestCfg) : null;
	const sorted = [...points].sort((a, b) => b.mean - a.mean);
	return table([
		{ label: 'Phase', cell: (p) => p.phase || 'whole job' },
		{ label: 'Config', wrap: true, cell: (p) => fmt.config(p.config) },
		{ label: 'Mean', num: true, cell: (p) => fmt.num(p.mean) },
		{ label: '± std', num: true, cell: (p) => fmt.num(p.std) },
		{ label: 'n', num: true, cell: (p) => fmt.num(p.n) },
		{ label: 'Model', num: true, wide: true, cell: (p) => fmt.num(p.predicted) },
	], sorted, (p) => (fmt.configKey(p.config) === bestKey ? 'best' : null));
}

function recommendation(rec, name) {
	const cfg = obj(rec && rec.config);
	const gain = rec && (rec.gain ?? rec.expected_gain);
	return card('Recommendation for the next job',
		rec ? facts([
			['Config', fmt.config(cfg)],
			['Source', rec.source ? badge(rec.source) : null],
			['Confidence', Number.isFinite(rec.confidence) ? fmt.pct(rec.confidence) : null],
			['Expected gain over the default', Number.isFinite(gain) ? fmt.pct(gain) : null],
			['Trials behind it', rec.trials != null ? fmt.num(rec.trials) : null],
		]) : h('p', { class: 'muted' }, 'No recommendation available.'),
		h('p', {}, 'Put this line in a job script or Slurm prologue to start with these settings:'),
		command(`eval "$(curl -s '${location.origin}/api/v1/recommend?workload=${encodeURIComponent(name)}&format=env')"`));
}

export function mount(main, args) {
	const name = args[0];
	const head = h('div', { class: 'page-head' }, h('h1', { 'data-testid': 'workload-title' }, name),
		h('span', { class: 'sub' }, link('all workloads', 'workloads')));
	const surfBox = h('div');
	const recBox = h('div');
	const tableBox = h('div');
	replace(main, head, surfBox, recBox, tableBox);
	const charts = [];
	let shape = '';

	function drawSurfaces(points, bestCfg, dfltCfg, objective) {
		const phases = [...new Set(points.map((p) => p.phase))].sort();
		const xk = xKnob(points);
		const key = JSON.stringify([phases, xk, points.length]);
		const built = phases.map((ph) => surface(points.filter((p) => p.phase === ph), xk, bestCfg, dfltCfg));
		if (key !== shape) {
			charts.forEach((c) => c.destroy());
			charts.length = 0;
			shape = key;
			replace(surfBox);
			phases.forEach((ph, i) => {
				const el = h('div', { class: 'chart', 'data-chart': 'surface' });
				const marks = { current: built[i].marks };
				const xs = built[i].data[0];
				const c = new Chart(el, {
					height: 280, xTime: false, yMin: 0,
					xLog: xs.length > 1 && xs[0] > 0,
					xSplits: () => xs,
					labels: { x: fmt.knobName(xk) + (xk === 'intra_threads' ? ' (intra-op threads)' : ''), y: objective || 'objective' },
					series: built[i].series.map((s) => ({ ...s, points: { show: true, size: 7 } })),
					plugins: [surfacePlugin(() => marks.current)],
				});
				c.marks = marks;
				charts.push(c);
				surfBox.append(card(`Learned surface${ph ? `: phase ${ph}` : phases.length > 1 ? ': whole job' : ''}`, el,
					h('p', { class: 'chart-note' }, 'Each point: the mean objective of one tried config; bars: ± one standard deviation; circle: best; diamond: the default.')));
			});
		}
		built.forEach((b, i) => {
			charts[i].marks.current = b.marks;
			charts[i].set(b.data);
		});
	}

	return {
		title: 'workload',
		every: 10,
		async refresh(signal) {
			let w;
			try {
				w = await api(`workloads/${encodeURIComponent(name)}`, signal);
			} catch (e) {
				if (e instanceof ApiError && e.status === 404) {
					replace(main, head, empty(`No workload named "${name}" has been seen yet.`,
						h('p', {}, 'It appears once a job registers with this name. A job script can still ask for a first guess:'),
						command(`eval "$(curl -s '${location.origin}/api/v1/recommend?workload=${encodeURIComponent(name)}&format=env')"`)));
					this.every = 0;
					return;
				}
				throw e;
			}
			const rec = await api(`recommend?workload=${encodeURIComponent(name)}&format=json`, signal).catch((e) => {
				if (e.name === 'AbortError')
					throw e;
				return null;
			});
			const all = tried(w);
			const xk = xKnob(all);
			const points = xk ? all.filter((p) => Number.isFinite(p.config[xk])) : [];
			const bestCfg = obj(obj(w.best)?.config) || obj(rec?.config);
			const dfltCfg = obj(obj(w.default)?.config) || obj(w.default_config) || obj(w.prior);
			if (!points.length) {
				charts.forEach((c) => c.destroy());
				charts.length = 0;
				shape = '';
				replace(surfBox, empty(all.length ? 'No numeric knob varies yet, so there is no surface to draw.' : 'Nothing measured yet for this workload.',
					h('p', {}, 'The surface appears once a job of this workload reports samples_per_s (or loss, for goodput) under the configs the tuner gives it.')));
			} else {
				drawSurfaces(points, bestCfg, dfltCfg, w.objective);
			}
			replace(recBox, recommendation(rec, name));
			replace(tableBox, all.length ? card('Tried configs', pointsTable(all, bestCfg)) : null,
				card('About', facts([
					['Parameters', fmt.params(obj(w.params))],
					['Hardware class', w.hw_class],
					['Objective', w.objective],
					['Jobs', w.jobs != null ? fmt.num(w.jobs) : null],
				])));
		},
		retheme() {
			charts.forEach((c) => c.redraw(true));
		},
		destroy() {
			charts.forEach((c) => c.destroy());
		},
	};
}
