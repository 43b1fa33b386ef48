/*
 * The Job page: one job live.  Its throughput with the timeline of the
 * configs the tuner assigned laid over it (one strip per phase, a band and a
 * line at each switch), then step time, loss, CPU use and busy threads, IPC
 * and cache misses, GPU and memory where they are counted, the config it
 * runs now, and every trial with its measured objective.
 */
import { api, series, latestMap, obj, trial as normTrial, ApiError } from '../api.js';
import { Chart, joinSeries, timelineModel, timelinePlugin, timelinePadding, theme } from '../charts.js';
import { h, replace, card, facts, table, badge, empty, command, link } from '../dom.js';
import { Panel, label } from '../panels.js';
import * as fmt from '../format.js';

const TRIALS_SHOWN = 100;

/* Panels below the throughput; names not matched by any go to "other". */
function panelSpecs(collectorNote) {
	return [
		{ id: 'step', title: 'Step time', names: ['step_time_s'], yMin: 0 },
		{ id: 'loss', title: 'Loss', names: ['loss'], optional: true },
		{ id: 'cpu', title: 'CPU: cores used and busy threads', names: ['cpu.cores', 'cpu.busy_threads', 'cpu.threads'], match: /^cpu\./, yMin: 0 },
		{ id: 'ipc', title: 'Instructions per cycle', match: /(^|\.)ipc$/, yMin: 0, optional: true, note: collectorNote(/papi|likwid|perf/i, 'IPC') },
		{ id: 'cache', title: 'Cache misses', match: /cache|llc|miss/, yMin: 0, optional: true, note: collectorNote(/papi|likwid|perf/i, 'cache misses') },
		{ id: 'gpu', title: 'GPU', match: /^gpu\./, yMin: 0, optional: true, note: collectorNote(/nvml|gpu/i, 'GPU use') },
		{ id: 'mem', title: 'Memory', match: /^mem\./, yMin: 0, optional: true },
	];
}

const KNOWN = /^(samples_per_s|step_time_s|loss|phase_time_s)$|^(cpu|mem|gpu)\.|ipc$|cache|llc|miss/;

function header(job) {
	const p = fmt.params(obj(job.params));
	const now = Date.now() / 1000;
	return [
		h('h1', { 'data-testid': 'job-title' }, job.workload || '(unnamed)'),
		badge(job.state || '–', job.state),
		h('span', { class: 'sub' }, [
			`job ${job.id}`,
			p ? ` · ${p}` : '',
			` · started ${fmt.time(job.started)}`,
			` · ran ${fmt.duration((job.ended ?? now) - job.started)}`,
		].join('')),
	];
}

function stats(latest) {
	const item = (name, text) => h('div', {}, h('div', { class: 'label' }, label(name)), h('div', { class: 'big' }, text));
	const v = (n) => latest.get(n)?.value;
	const rows = [
		['samples_per_s', fmt.num(v('samples_per_s'))],
		['step_time_s', Number.isFinite(v('step_time_s')) ? fmt.num(v('step_time_s')) + ' s' : '–'],
		latest.has('loss') ? ['loss', fmt.num(v('loss'))] : null,
		['cpu.cores', fmt.num(v('cpu.cores'))],
		['cpu.busy_threads', fmt.num(v('cpu.busy_threads'))],
	].filter(Boolean);
	return h('div', { class: 'stats' }, rows.map(([n, t]) => item(n, t)));
}

function configCard(job) {
	const cfg = obj(job.config) || {};
	const rows = fmt.knobs(cfg).map(([k, v]) => ['', k, typeof v === 'object' ? JSON.stringify(v) : String(v)]);
	for (const [ph, over] of Object.entries(cfg.phases || {}))
		for (const [k, v] of fmt.knobs(over))
			rows.push([ph, k, typeof v === 'object' ? JSON.stringify(v) : String(v)]);
	const knobs = obj(job.knobs);
	return card('Config it runs now',
		rows.length ? table([
			{ label: 'Phase', cell: (r) => r[0] || 'whole job' },
			{ label: 'Knob', cell: (r) => r[1] },
			{ label: 'Value', cell: (r) => r[2] },
		], rows) : h('p', { class: 'muted' }, 'No config assigned yet.'),
		knobs && Object.keys(knobs).length
			? h('p', { class: 'chart-note' }, 'Knobs the job declared: ', h('code', {}, JSON.stringify(knobs))) : null);
}

function trialsCard(trials, objective) {
	if (!trials.length)
		return card('Trials', h('p', { class: 'muted' },
			'No trials yet: the tuner opens one when the job reports samples with the config it runs.'));
	const best = new Map();
	for (const t of trials)
		if (t.n > 0 && Number.isFinite(t.mean) && (!best.has(t.phase) || t.mean > best.get(t.phase).mean))
			best.set(t.phase, t);
	const shown = trials.slice(-TRIALS_SHOWN).reverse();
	return card(`Trials (${objective || 'throughput'})`,
		trials.length > TRIALS_SHOWN ? h('p', { class: 'chart-note' }, `The latest ${TRIALS_SHOWN} of ${trials.length}.`) : null,
		table([
			{ label: 'Phase', cell: (t) => t.phase || 'whole job' },
			{ label: 'Config', wrap: true, cell: (t) => fmt.config(t.config) },
			{ label: 'From', wide: true, cell: (t) => fmt.time(t.start) },
			{ label: 'For', num: true, cell: (t) => (t.end ? fmt.duration(t.end - t.start) : 'now') },
			{ label: 'n', num: true, cell: (t) => String(t.n) },
			{ label: 'Mean', num: true, cell: (t) => fmt.num(t.mean) },
			{ label: '± std', num: true, wide: true, cell: (t) => fmt.num(t.std) },
		], shown, (t) => (best.get(t.phase) === t ? 'best' : null)),
		h('p', { class: 'chart-note' }, 'Bold: the best trial of each phase so far.'));
}

/* The legend of the timeline: each config's colour and label. */
function legend(model) {
	const th = theme();
	if (!model.lanes.length)
		return h('p', { class: 'chart-note' }, 'No config switches yet.');
	return h('ul', { class: 'chips', 'data-testid': 'timeline-legend' },
		[...model.colors.entries()].map(([text, i]) => h('li', {},
			h('span', { class: 'swatch', style: `background:${th.palette[i % th.palette.length]}` }), text)));
}

export function mount(main, args) {
	const id = args[0];
	const head = h('div', { class: 'page-head' });
	const statsBox = h('div');
	const tpChart = h('div', { class: 'chart', 'data-chart': 'throughput' });
	const tpLegend = h('div');
	const tpCursor = h('p', { class: 'chart-note', 'data-testid': 'cursor-config' });
	const tpCard = card('Throughput and the configs tried', statsBox, tpChart, tpLegend, tpCursor);
	const emptyBox = h('div');
	let node = null;
	const collectorNote = (re, what) => () => {
		const c = node && (node.collectors || []).find((x) => re.test(x.name) && x.status !== 'available');
		return c ? `${what} (${c.name}: ${c.reason || 'unavailable'})` : `${what} (no samples)`;
	};
	const panels = panelSpecs(collectorNote).map((s) => new Panel(s));
	const others = new Map();
	const otherGrid = h('div', { class: 'grid two' });
	const cfgBox = h('div');
	const trialsBox = h('div');
	const detailsBox = h('div');
	const missingNote = h('p', { class: 'chart-note', 'data-testid': 'not-measured' });
	replace(main, head, emptyBox, tpCard, h('div', { class: 'grid two' }, panels.map((p) => p.el)), missingNote,
		otherGrid, cfgBox, trialsBox, detailsBox);

	let chart = null;
	let model = null;
	let lanes = -1;
	let range = [0, 1];

	function cursorText(u) {
		const t = u.cursor.idx != null ? u.data[0][u.cursor.idx] : null;
		if (t == null || !model) {
			tpCursor.textContent = '';
			return;
		}
		const parts = model.lanes.map((l) => {
			const s = l.segments.find((x) => x.start <= t && t <= x.end);
			return s ? `${l.name || 'job'}: ${fmt.config(s.trial.config)}` : null;
		}).filter(Boolean);
		tpCursor.textContent = parts.length ? `At ${fmt.time(t)}: ${parts.join('; ')}` : '';
	}

	function throughputChart(data) {
		if (!chart || lanes !== model.lanes.length) {
			if (chart)
				chart.destroy();
			lanes = model.lanes.length;
			chart = new Chart(tpChart, {
				height: 260,
				yMin: 0,
				padding: [timelinePadding(model), 12, 0, 0],
				yAxisMin: model.lanes.length ? 72 : 0,
				series: [{ label: 'samples/s' }],
				xRange: () => range,
				plugins: [timelinePlugin(() => model), { hooks: { setCursor: [cursorText] } }],
				emptyText: 'No throughput yet: the job has reported no samples_per_s.',
			});
		}
		chart.set(data);
	}

	async function refreshOthers(names, from, to, signal) {
		const extra = [...names].filter((n) => !KNOWN.test(n)).sort().slice(0, 8);
		for (const [n, p] of others)
			if (!extra.includes(n)) {
				p.destroyChart();
				p.el.remove();
				others.delete(n);
			}
		for (const n of extra)
			if (!others.has(n)) {
				const p = new Panel({ id: 'metric-' + n, title: n, names: [n] });
				others.set(n, p);
				otherGrid.append(p.el);
			}
		await Promise.all([...others.values()].map((p) => p.update(id, names, from, to, signal)));
	}

	return {
		title: 'job ' + id,
		every: 2,
		async refresh(signal) {
			let job;
			try {
				job = await api(`jobs/${encodeURIComponent(id)}`, signal);
			} catch (e) {
				if (e instanceof ApiError && (e.status === 404 || e.status === 400)) {
					replace(main, empty(`No job ${id} here.`, h('p', {}, link('See the jobs this node knows.', 'jobs'))));
					this.every = 0;
					return;
				}
				throw e;
			}
			if (!node)
				node = await api('node', signal).catch(() => null);
			const now = Date.now() / 1000;
			const to = job.ended ?? now;
			range = [job.started, Math.max(to, job.started + 10)];
			const latest = latestMap(job.latest);
			const names = new Set(latest.keys());
			replace(head, ...header(job));
			replace(statsBox, stats(latest));
			model = timelineModel((job.trials || []).map(normTrial), to);
			const tp = await series(id, 'samples_per_s', range[0], range[1], signal);
			throughputChart(joinSeries([tp]));
			replace(tpLegend, legend(model));
			replace(emptyBox, names.size ? null : empty('This job has reported nothing yet.',
				h('p', {}, 'Samples appear here as the dlprof client flushes them (about once a second), or post some:'),
				command(`curl -s -X POST -H 'Content-Type: application/json' \\\n  -d '{"samples":[{"t":'$(date +%s)',"name":"samples_per_s","value":100}]}' \\\n  ${location.origin}/api/v1/jobs/${id}/metrics`)));
			await Promise.all(panels.map((p) => p.update(id, names, range[0], range[1], signal)));
			const missing = panels.map((p) => p.missing()).filter(Boolean);
			missingNote.textContent = missing.length ? 'Not measured for this job: ' + missing.join('; ') + '.' : '';
			await refreshOthers(names, range[0], range[1], signal);
			replace(cfgBox, configCard(job));
			replace(trialsBox, trialsCard((job.trials || []).map(normTrial), job.objective));
			replace(detailsBox, card('Details', facts([
				['Objective', job.objective],
				['Phases', (job.phases || []).join(', ')],
				['Process', job.pid ? String(job.pid) : null],
				['External id', job.external_id],
				['Owner', Number.isInteger(job.uid) ? `uid ${job.uid}` : null],
				['Found by', job.source],
				['Command', job.command],
				['Hardware class', job.hw_class],
				['Ended', job.ended ? `${fmt.time(job.ended)}${Number.isInteger(job.exit_status) ? `, exit status ${job.exit_status}` : ''}` : null],
				['Workload', job.workload ? link(job.workload, 'workloads', job.workload) : null],
			])));
			this.every = job.state === 'running' ? 2 : 0;
		},
		retheme() {
			if (chart)
				chart.redraw(true);
			panels.forEach((p) => p.retheme());
			others.forEach((p) => p.retheme());
		},
		destroy() {
			if (chart)
				chart.destroy();
			panels.forEach((p) => p.destroyChart());
			others.forEach((p) => p.destroyChart());
		},
	};
}
