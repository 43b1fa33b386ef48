/*
 * One workload's learned surface: the objective of each tried config
 * against intra-op threads (or the knob with most values), one line per
 * value of the other knobs that vary, error bars of one standard deviation,
 * the model's prediction dashed, the best and the default marked; per phase
 * when phases were tuned.  Then the recommendation with its confidence and
 * gain, and the prologue line that applies it to a job script; for
 * objective=goodput, each config's raw and learning speed-up.
 */
import { api, obj, query as qs, ApiError } from '../api.js';
import { Chart, surfacePlugin } from '../charts.js';
import { h, replace, card, facts, table, empty, command, link, badge } from '../dom.js';
import * as fmt from '../format.js';

/* Model lines are drawn only for this many groups, to keep the chart readable. */
const MODEL_GROUPS = 4;

function points(list) {
	return (list || []).map((c) => ({
		phase: c.phase || '',
		config: obj(c.config) || {},
		mean: c.mean,
		std: c.std,
		n: c.n,
		trials: c.trials,
		predicted: c.predicted,
	})).filter((c) => Number.isFinite(c.mean));
}

/* The knobs whose value differs between the points. */
function varying(pts) {
	const keys = new Set();
	for (const p of pts)
		for (const [k, v] of fmt.knobs(p.config))
			if (pts.some((q) => JSON.stringify(q.config[k]) !== JSON.stringify(v)))
				keys.add(k);
	return keys;
}

/* The knob for the x axis: intra_threads when several were tried, else the numeric knob with most values. */
function xKnob(pts) {
	const values = new Map();
	for (const p of pts)
		for (const [k, v] of fmt.knobs(p.config))
			if (typeof v === 'number')
				(values.get(k) || values.set(k, new Set()).get(k)).add(v);
	if (values.has('intra_threads') && values.get('intra_threads').size > 1)
		return 'intra_threads';
	let best = null;
	for (const [k, s] of values)
		if (!best || s.size > values.get(best).size)
			best = k;
	return best;
}

/* uPlot data, series and marks for one phase: measured lines, model lines, error bars, best, default. */
function surface(tried, predicted, xk, bestCfg, dfltCfg) {
	const vary = [...varying(tried)].filter((k) => k !== xk);
	const groupOf = (cfg) => fmt.config(Object.fromEntries(vary.map((k) => [k, cfg[k]])));
	const groups = [...new Set(tried.map((p) => groupOf(p.config)))];
	const model = groups.length <= MODEL_GROUPS
		? predicted.filter((p) => groups.includes(groupOf(p.config)) && Number.isFinite(p.config[xk])) : [];
	const xs = [...new Set([...tried, ...model].map((p) => p.config[xk]))].sort((a, b) => a - b);
	const data = [xs], series = [];
	const marks = { bars: [], best: null, dflt: null };
	const bestKey = bestCfg ? fmt.configKey(bestCfg) : null;
	const dfltKey = dfltCfg ? fmt.configKey(dfltCfg) : null;
	const line = (ps) => xs.map((x) => ps.find((q) => q.config[xk] === x)?.mean ?? null);
	groups.forEach((g, gi) => {
		const ps = tried.filter((p) => groupOf(p.config) === g);
		const si = data.length;
		data.push(line(ps));
		series.push({ label: g === '–' ? 'measured' : g, colorIndex: gi, points: { show: true, size: 7 } });
		for (const p of ps) {
			if (Number.isFinite(p.std) && p.std > 0)
				marks.bars.push([p.config[xk], p.mean - p.std, p.mean + p.std, si]);
			if (fmt.configKey(p.config) === bestKey)
				marks.best = [p.config[xk], p.mean];
			if (fmt.configKey(p.config) === dfltKey)
				marks.dflt = [p.config[xk], p.mean];
		}
		const ms = model.filter((p) => groupOf(p.config) === g);
		if (ms.length) {
			data.push(line(ms));
			series.push({ label: g === '–' ? 'model' : g + ' (model)', colorIndex: gi,
				points: { show: false }, extra: { dash: [4, 4], width: 1 } });
		}
	});
	/* The default may be untried: mark it on the model's line when the model covers it. */
	if (!marks.dflt && dfltKey) {
		const p = model.find((q) => fmt.configKey(q.config) === dfltKey);
		if (p)
			marks.dflt = [p.config[xk], p.mean];
	}
	return { data, series, marks, vary };
}

function pointsTable(pts, bestKeys) {
	const sorted = [...pts].sort((a, b) => a.phase.localeCompare(b.phase) || b.mean - a.mean);
	return table([
		{ label: 'Phase', cell: (p) => p.phase || 'whole job' },
		{ label: 'Config', wrap: true, cell: (p) => fmt.config(p.config) },
		{ label: 'Mean', num: true, cell: (p) => fmt.num(p.mean) },
		{ label: '± std', num: true, cell: (p) => fmt.num(p.std) },
		{ label: 'Steps', num: true, wide: true, cell: (p) => fmt.num(p.n) },
		{ label: 'Trials', num: true, cell: (p) => fmt.num(p.trials) },
		{ label: 'Model', num: true, wide: true, cell: (p) => fmt.num(p.predicted) },
	], sorted, (p) => (bestKeys.has(p.phase + fmt.configKey(p.config)) ? 'best' : null));
}

function configText(cfg) {
	if (!cfg)
		return '–';
	const per = Object.entries(cfg.phases || {}).map(([ph, o]) => `${ph}: ${fmt.config(o)}`);
	return [fmt.config(cfg), ...per].join('; ');
}

/* The query that names this workload variant to the API: its params and objective. */
function variantQuery(params, objective) {
	const q = new URLSearchParams();
	for (const [k, v] of Object.entries(params || {}))
		q.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
	if (objective)
		q.set('objective', objective);
	return q;
}

export function workloadHref(name, params, objective) {
	const q = qs(variantQuery(params, objective));
	return '#/workloads/' + encodeURIComponent(name) + (q ? '?' + q : '');
}

/* The recommend query for a variant: workload first, then its params and objective, format last. */
function recommendQuery(name, query, format) {
	const pairs = [['workload', name], ...[...query].filter(([k]) => k !== 'workload' && k !== 'format'), ['format', format]];
	return qs(pairs);
}

function prologue(name, query) {
	return `eval "$(curl -s '${location.origin}/api/v1/recommend?${recommendQuery(name, query, 'env')}')"`;
}

function recommendation(rec, name, query) {
	const cfg = obj(rec && rec.config);
	const exp = rec && rec.expected;
	return card('Recommendation for the next job',
		rec ? facts([
			['Config', configText(cfg)],
			['Source', rec.source ? badge(rec.source, rec.source === 'learned' ? 'learned' : 'default') : null],
			['From class', rec.other_class
				? `${rec.other_class.hw_class} (${fmt.num(rec.other_class.trials)} whole-job trials there; a prior, not trials here)` : null],
			['Why', rec.explanation],
			['Expected', exp && Number.isFinite(exp.value) ? `${fmt.num(exp.value)} ± ${fmt.num(exp.std)}` : null],
			['Gain over the default', Number.isFinite(rec.expected_gain) ? fmt.pct(rec.expected_gain) : null],
			['Confidence', Number.isFinite(rec.confidence)
				? `${fmt.pct(rec.confidence)}${rec.confident ? ' (done exploring)' : ''}` : null],
			['Trials behind it', rec.trials ? fmt.num(rec.trials) : null],
		]) : h('p', { class: 'muted' }, 'No recommendation available.'),
		h('p', {}, 'Put this line in a job script or Slurm prologue to start with these settings:'),
		command(prologue(name, query)));
}

function knobsText(knobs) {
	return Object.entries(obj(knobs) || {}).map(([k, d]) => {
		const vals = Array.isArray(d.values) ? d.values : [];
		const shown = vals.length > 6 ? `${vals[0]}…${vals[vals.length - 1]} (${vals.length} values)` : vals.join(', ');
		return `${fmt.knobName(k)}: ${shown}${d.runtime ? ' (changes while running)' : ''}`;
	}).join('; ');
}

function variants(name, w) {
	const vs = w.variants || [];
	if (vs.length < 2)
		return null;
	return card('Other variants of this workload', h('ul', { class: 'chips' }, vs.map((v) =>
		h('li', {}, h('a', { href: workloadHref(name, obj(v.params), v.objective) },
			`${fmt.params(obj(v.params)) || 'no params'} · ${v.objective} · ${v.trials} trials`)))));
}

function aboutCard(w) {
	return card('About', facts([
		['Knobs', knobsText(w.knobs)],
		['Configs possible', w.candidates != null ? fmt.num(w.candidates) : null],
		['Jobs', w.jobs != null ? fmt.num(w.jobs) : null],
		['Trials', w.trials != null ? fmt.num(w.trials) : null],
		['Default config', configText(obj(obj(w.default)?.config))],
	]));
}

/* The ratio a/b as a signed percentage ("+12%"), or '–'. */
function versus(a, b) {
	const d = Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b - 1 : NaN;
	return Number.isFinite(d) ? (d > 0 ? '+' : '') + fmt.pct(d) : '–';
}

/*
 * Per phase: the setting the best plan runs there and the ones rejected, each
 * with its whole-job evidence (a phase's own time never decides alone).
 */
function phaseSettingsCard(w) {
	const rows = (w.phase_settings || []).filter(Boolean);
	if (!rows.length)
		return null;
	const rejected = (s) => (s.rejected || []).map((r) =>
		`${fmt.config(obj(r.setting))}: whole job ${fmt.num(r.plan_mean)} (${versus(r.plan_mean, r.best_mean)} vs best, ${r.trials} trials)`);
	return card('Per-phase settings', table([
		{ label: 'Phase', cell: (s) => s.phase },
		{ label: 'Adopted', wrap: true, cell: (s) => (s.adopted ? fmt.config(obj(s.adopted)) : 'the job-wide setting') },
		{ label: 'Whole-job evidence', wrap: true, cell: (s) => (s.adopted
			? `${fmt.num(s.plan_mean)} with it, ${fmt.num(s.uniform_mean)} without (${configText(obj(s.uniform_config))}): ${versus(s.plan_mean, s.uniform_mean)}`
			: `the best plan runs it at the job-wide setting (${fmt.num(s.plan_mean)})`) },
		{ label: 'Rejected', wrap: true, cell: (s) => (rejected(s).length ? h('ul', { class: 'plain' }, rejected(s).map((t) => h('li', {}, t))) : '–') },
	], rows), h('p', { class: 'chart-note' }, 'A per-phase setting is adopted only when the whole job, measured with it, beats the best plan without it; a rejected one stays measured and is not proposed again.'));
}

/* Every whole-job plan measured: static knobs and per-phase settings together. */
function plansCard(w) {
	const rows = (w.plans || []).filter(Boolean).sort((a, b) => (b.mean || 0) - (a.mean || 0));
	if (!rows.length)
		return null;
	return card('Whole-job plans measured', table([
		{ label: 'Plan', wrap: true, cell: (p) => configText(obj(p.config)) },
		{ label: 'Mean', num: true, cell: (p) => fmt.num(p.mean) },
		{ label: '± std', num: true, cell: (p) => fmt.num(p.std) },
		{ label: 'Trials', num: true, cell: (p) => fmt.num(p.trials) },
		{ label: 'vs best', num: true, cell: (p) => versus(p.mean, p.mean / p.vs_best) },
	], rows, (p) => (p.status === 'best' ? 'best' : null)));
}

/* A speed-up against the baseline: "×1.53", or '–' when it is not known. */
function speedup(v) {
	return Number.isFinite(v) ? '×' + fmt.num(v) : '–';
}

/*
 * objective=goodput: the noise scale behind the statistical efficiency and,
 * per config measured, its raw and learning speed-up against the baseline.
 * Where the efficiency is unknown it says that configs are ranked by
 * throughput, and shows no efficiency.
 */
function goodputCard(gp) {
	if (!gp)
		return null;
	const rows = (gp.configs || []).filter(Boolean);
	const keys = [...varying(rows.map((r) => ({ config: obj(r.config) || {} })))];
	const shown = (cfg) => fmt.config(cfg, keys.length ? keys : undefined);
	const base = obj(gp.baseline) || {};
	const est = obj(gp.noise_estimate);
	const estText = est ? `, estimate ${fmt.num(est.value)} ± ${fmt.pct(est.rel_se)}` : '';
	return card('Learning speed-up (goodput)', facts([
		['Noise scale φ', Number.isFinite(gp.noise_scale) ? `${fmt.num(gp.noise_scale)} ± ${fmt.pct(est && est.rel_se)} (from ${fmt.num(gp.noise_steps)} steps)`
			: `unknown (${fmt.num(gp.noise_steps)} steps of noise figures${estText})`],
		['Ranked by', gp.ranked_by === 'goodput' ? 'samples/s × efficiency E(M) = (φ + M₀) / (φ + M)' : 'samples/s: the efficiency is unknown'],
		['Baseline', base.config ? `${shown(obj(base.config))}, global batch M₀ ${fmt.num(base.global_batch)} (${base.why})` : base.why],
	]), gp.ranked_by === 'goodput' ? null : h('p', { class: 'muted' }, gp.note || ''),
	rows.length ? table([
		{ label: 'Config', wrap: true, cell: (r) => shown(obj(r.config)) },
		{ label: 'Global batch', num: true, cell: (r) => fmt.num(r.global_batch) },
		{ label: 'Samples/s', num: true, cell: (r) => fmt.num(r.samples_per_s) },
		{ label: 'Efficiency', num: true, cell: (r) => fmt.num(r.efficiency) },
		{ label: 'Raw speed-up', num: true, cell: (r) => speedup(r.raw_speedup) },
		{ label: 'Learning speed-up', num: true, cell: (r) => speedup(r.learning_speedup) },
	], rows, (r) => (r === rows[0] && gp.ranked_by === 'goodput' ? 'best' : null)) : null,
	h('p', { class: 'chart-note' }, 'Raw speed-up: samples/s against the baseline. Learning speed-up: that times the statistical efficiency'
		+ ' of the config\'s global batch (Pollux), how much sooner training progresses. The noise scale is measured from the'
		+ ' gradient norms jobs report; it grows as training goes on, so it describes the steps measured so far.'));
}

function surfaceCard(title, el) {
	return card(title, el, h('p', { class: 'chart-note' }, 'Points: the measured mean of each tried config, bars ± one standard deviation;'
		+ ' dashed: the model; circle: the best; diamond: the topology default.'));
}

class WorkloadView {
	constructor(main, name, query) {
		this.main = main;
		this.name = name;
		this.query = query;
		this.title = 'workload ' + name;
		this.every = 10;
		this.sub = h('span', { class: 'sub' });
		this.head = h('div', { class: 'page-head' }, h('h1', { 'data-testid': 'workload-title' }, name), this.sub,
			link('all workloads', 'workloads'));
		this.surfBox = h('div');
		this.recBox = h('div');
		this.tableBox = h('div');
		this.charts = [];
		this.shape = '';    /* what the charts were built for; they are rebuilt when it changes */
		replace(main, this.head, this.surfBox, this.recBox, this.tableBox);
	}

	async refresh(signal) {
		const q = qs(this.query);
		let w;
		try {
			w = await api(`workloads/${encodeURIComponent(this.name)}${q ? '?' + q : ''}`, signal);
		} catch (e) {
			if (e instanceof ApiError && e.status === 404) {
				replace(this.main, this.head, empty(`No workload named "${this.name}" has been seen yet.`,
					h('p', {}, 'It appears once a job registers with this name. A job script can still ask for a first guess:'),
					command(prologue(this.name, this.query))));
				this.every = 0;
				return;
			}
			throw e;
		}
		/* The variant shown names the recommendation: its own params and objective. */
		const vq = variantQuery(obj(w.params), w.objective);
		const rec = await api(`recommend?${recommendQuery(this.name, vq, 'json')}`, signal).catch((e) => {
			if (e.name === 'AbortError')
				throw e;
			return null;
		});
		this.sub.textContent = [fmt.params(obj(w.params)), w.objective, w.hw_class].filter(Boolean).join(' · ');
		const tried = points(w.tried);
		if (!(tried.length && this.draw(w, tried, points(w.predicted)))) {
			this.destroy();
			this.shape = '';
			replace(this.surfBox, empty(tried.length ? 'No numeric knob was varied, so there is no surface to draw.' : 'Nothing measured yet for this workload.',
				h('p', {}, 'The surface appears once a job of this workload reports samples_per_s (and, for goodput, its gradient noise figures) under the configs the tuner gives it.')));
		}
		const bestKeys = new Set([obj(w.best), ...(w.phases || [])].filter((b) => b && b.config)
			.map((b) => (b.phase || '') + fmt.configKey(obj(b.config))));
		replace(this.recBox, recommendation(rec, this.name, vq));
		const gpCard = goodputCard(obj(w.goodput));
		if (gpCard)
			gpCard.dataset.testid = 'goodput';
		replace(this.tableBox, gpCard, phaseSettingsCard(w), plansCard(w), tried.length ? card('Tried configs', pointsTable(tried, bestKeys),
			h('p', { class: 'chart-note' }, 'Bold: the best of each phase.')) : null, variants(this.name, w), aboutCard(w));
	}

	/* One surface chart per phase; returns how many were drawn. */
	draw(w, tried, predicted) {
		const xk = xKnob(tried);
		const usable = tried.filter((p) => Number.isFinite(p.config[xk]));
		const phases = [...new Set(usable.map((p) => p.phase))].sort();
		const bestOf = (ph) => obj((ph === '' ? obj(w.best) : (w.phases || []).find((b) => b && b.phase === ph))?.config);
		const dflt = obj(obj(w.default)?.config);
		const built = phases.map((ph) => surface(usable.filter((p) => p.phase === ph),
			predicted.filter((p) => p.phase === ph), xk, bestOf(ph), dflt));
		const key = JSON.stringify([xk, phases, built.map((b) => [b.data[0], b.series.map((s) => s.label)])]);
		if (key !== this.shape) {
			this.destroy();
			this.shape = key;
			replace(this.surfBox);
			phases.forEach((ph, i) => {
				const el = h('div', { class: 'chart', 'data-chart': 'surface' });
				this.charts.push(this.chart(el, w, xk, built[i]));
				this.surfBox.append(surfaceCard(`Learned surface${ph ? ` of phase ${ph}` : phases.length > 1 ? ' of the whole job' : ''}`, el));
			});
		}
		built.forEach((b, i) => {
			this.charts[i].marks.current = b.marks;
			this.charts[i].set(b.data);
		});
		return phases.length;
	}

	chart(el, w, xk, built) {
		const xs = built.data[0];
		const marks = { current: built.marks };
		const c = new Chart(el, {
			title: `Learned surface of ${this.name}`, name: 'surface',
			height: 300, xTime: false, yMin: 0,
			xLog: xs.length > 1 && xs[0] > 0,
			xSplits: () => xs,
			labels: { x: xk === 'intra_threads' ? 'intra-op threads' : xk, y: `${w.objective || 'objective'}` },
			series: built.series,
			plugins: [surfacePlugin(() => marks.current)],
			/* The error bars stay inside the plot. */
			yHi: () => Math.max(-Infinity, ...marks.current.bars.map((b) => b[2])),
		});
		c.marks = marks;
		return c;
	}

	retheme() {
		this.charts.forEach((c) => c.redraw(true));
	}

	destroy() {
		this.charts.forEach((c) => c.remove());
		this.charts.length = 0;
	}
}

export function mount(main, args, query) {
	return new WorkloadView(main, args[0], query);
}
