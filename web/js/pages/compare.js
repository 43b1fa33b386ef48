/*
 * Jobs side by side (#/compare?jobs=3,7,12): two to eight jobs, of one
 * workload or not, their throughput, step time and loss overlaid on one
 * time axis that starts at each job's own start, and a table of each job's
 * config, verdicts and energy beside.  The URL names the jobs, so it
 * reproduces the view; the picker below changes it.
 */
import { api, series, obj, list, firstSample, ApiError } from '../api.js';
import { h, replace, card, table, badge, empty, link, when, compareHref } from '../dom.js';
import { Chart } from '../charts.js';
import { formatter } from '../panels.js';
import * as fmt from '../format.js';

const MAX_JOBS = 8;
const CHARTS = [
	{ name: 'samples_per_s', title: 'Throughput (samples/s)', id: 'compare-throughput' },
	{ name: 'step_time_s', title: 'Step time', id: 'compare-step' },
	{ name: 'loss', title: 'Loss', id: 'compare-loss' },
];

/* The job ids a query names: ?jobs=3,7,12 (at most MAX_JOBS, each once). */
export function parseJobs(q) {
	const ids = String(q.get('jobs') || '').split(',').map((x) => x.trim()).filter((x) => /^\d+$/.test(x));
	return [...new Set(ids)].slice(0, MAX_JOBS);
}

/* Each job's life: from its start (or its first throughput sample, when a job reported before it registered) to its end or now. */
function span(job) {
	return [job.origin ?? job.started, job.ended ?? Date.now() / 1000];
}

/* The series of every job on one axis of seconds since each one's start. */
async function overlay(jobs, name, signal) {
	const got = await Promise.all(jobs.map((j) => {
		const [from, to] = span(j);
		return series(j.id, name, from, Math.max(to, from + 10), signal);
	}));
	const tables = got.map((s, i) => [s.xs.map((x) => x - span(jobs[i])[0]), s.ys]);
	const xs = [...new Set(tables.flatMap((t) => t[0]))].sort((a, b) => a - b);
	const at = new Map(xs.map((x, i) => [x, i]));
	const cols = tables.map(([tx, ty]) => {
		const col = new Array(xs.length).fill(null);
		tx.forEach((x, i) => { col[at.get(x)] = ty[i]; });
		return col;
	});
	return { data: [xs, ...cols], points: got.reduce((n, s) => n + s.xs.length, 0) };
}

function jobLabel(j) {
	return `${j.id} ${j.workload || '(unnamed)'}`;
}

function verdictsCell(rep) {
	if (!rep)
		return h('span', { class: 'muted' }, 'no diagnosis');
	const v = rep.verdicts || [];
	return v.length ? v.map((x) => h('div', {}, badge(x.kind, 'failed'), x.active ? ' now' : ''))
		: h('span', { class: 'muted' }, 'none');
}

function jobsTable(jobs, reports) {
	const th = getComputedStyle(document.documentElement);
	return table([
		{ label: 'Job', cell: (j) => [h('span', { class: 'swatch', style: `background:${th.getPropertyValue('--c' + (jobs.indexOf(j) % 8)).trim()}` }),
			link(String(j.id), 'jobs', j.id)] },
		{ label: 'Workload', wrap: true, cell: (j) => [j.workload || '(unnamed)', fmt.params(obj(j.params)) ? h('div', { class: 'muted' }, fmt.params(obj(j.params))) : null] },
		{ label: 'State', cell: (j) => badge(j.state || '–', j.state) },
		/* Where its axis starts, as Ran counts: a job that reported before it registered started then. */
		{ label: 'Started', wide: true, cell: (j) => when(span(j)[0]) },
		{ label: 'Ran', num: true, cell: (j) => fmt.duration(span(j)[1] - span(j)[0]) },
		{ label: 'Config', wrap: true, cell: (j) => fmt.config(obj(j.config)) },
		{ label: 'Verdicts', wrap: true, cell: (j) => verdictsCell(reports.get(j.id)) },
		{ label: 'Energy', num: true, cell: (j) => (j.energy && j.energy.joules != null ? fmt.energy(j.energy.joules) : '–') },
		{ label: 'Samples/J', num: true, wide: true, cell: (j) => fmt.num(j.energy && j.energy.samples_per_joule) },
	], jobs);
}

/* The picker: the recent jobs with a box each; Compare opens the view of those ticked. */
function picker(all, chosen) {
	const boxes = all.slice(0, 200).map((j) => {
		const box = h('input', { type: 'checkbox', value: String(j.id), 'data-job': String(j.id),
			checked: chosen.includes(String(j.id)) ? true : null });
		return h('li', {}, h('label', {}, box, ` ${jobLabel(j)} `, h('span', { class: 'muted' }, j.state)));
	});
	const msg = h('span', { class: 'muted', 'aria-live': 'polite' });
	const go = h('button', { type: 'button', 'data-testid': 'compare-go' }, 'Compare');
	go.addEventListener('click', () => {
		const ticked = boxes.map((li) => li.querySelector('input')).filter((b) => b.checked).map((b) => b.value);
		/* The jobs shown keep their order (and colours); those ticked now follow. */
		const ids = [...chosen.filter((id) => ticked.includes(id)), ...ticked.filter((id) => !chosen.includes(id))];
		if (ids.length < 2 || ids.length > MAX_JOBS) {
			msg.textContent = `Tick two to ${MAX_JOBS} jobs (${ids.length} ticked).`;
			return;
		}
		location.hash = compareHref(ids);
	});
	return card('Choose the jobs', h('ul', { class: 'pick', 'data-testid': 'compare-picker' }, boxes),
		h('p', {}, go, ' ', msg));
}

class CompareView {
	constructor(main, query) {
		this.main = main;
		this.ids = parseJobs(query);
		this.title = 'compare ' + this.ids.join(', ');
		this.every = 10;
		this.head = h('div', { class: 'page-head' }, h('h1', {}, 'Jobs side by side'),
			h('span', { class: 'sub' }, 'time since each job\'s start'));
		this.tableBox = h('div');
		this.chartEls = CHARTS.map((c) => h('div', { class: 'chart', 'data-chart': c.id }));
		this.cards = CHARTS.map((c, i) => card(c.title, this.chartEls[i]));
		this.charts = [];
		this.origins = new Map();   /* job id -> where its axis starts, read once */
		this.pickBox = h('div');
		replace(main, this.head, this.tableBox, h('div', { class: 'grid two' }, this.cards), this.pickBox);
	}

	async refresh(signal) {
		const all = list(await api('jobs?state=all', signal), 'jobs');
		replace(this.pickBox, picker(all, this.ids));
		if (this.ids.length < 2) {
			this.every = 0;
			this.cards.forEach((c) => { c.hidden = true; });
			replace(this.tableBox, empty('Pick two to eight jobs to see them side by side.',
				h('p', {}, 'Tick them below, or on the Jobs page; the address of the view names them, so it can be shared.')));
			return;
		}
		const jobs = await Promise.all(this.ids.map((id) => api(`jobs/${encodeURIComponent(id)}`, signal).catch((e) => {
			if (e instanceof ApiError && e.status === 404)
				return null;
			throw e;
		})));
		const found = jobs.filter(Boolean);
		/* Where each job's axis starts; the job page widens its range the same way. */
		await Promise.all(found.map(async (j) => {
			if (!this.origins.has(j.id))
				this.origins.set(j.id, Math.min(j.started, (await firstSample(j.id, j.started, signal)) ?? Infinity));
			j.origin = this.origins.get(j.id);
		}));
		const missing = this.ids.filter((id, i) => !jobs[i]);
		const reports = new Map(await Promise.all(found.map(async (j) => [j.id,
			await api(`jobs/${encodeURIComponent(j.id)}/report`, signal).catch((e) => { if (e.name === 'AbortError') throw e; return null; })])));
		replace(this.tableBox, h('section', { class: 'card', 'data-testid': 'compare-table' }, jobsTable(found, reports),
			missing.length ? h('p', { class: 'chart-note' }, `No job ${missing.join(', ')} here.`) : null));
		const overlays = await Promise.all(CHARTS.map((c) => overlay(found, c.name, signal)));
		const key = found.map((j) => j.id).join(',');
		if (key !== this.key) {
			this.destroy();
			this.key = key;
			this.charts = CHARTS.map((c, i) => new Chart(this.chartEls[i], {
				title: c.title, name: c.id, height: 220, xTime: false, yMin: c.name === 'loss' ? undefined : 0,
				labels: { x: 'since the job\'s start' }, xFmt: (x) => fmt.elapsed(x),
				yFmt: formatter(c.name),
				series: found.map((j, k) => ({ label: jobLabel(j), colorIndex: k, fmt: formatter(c.name) })),
				emptyText: `None of these jobs reported ${c.name}.`,
			}));
		}
		overlays.forEach((o, i) => {
			this.cards[i].hidden = false;
			this.charts[i].set(o.data);
		});
		this.every = found.some((j) => j.state === 'running') ? 10 : 0;
	}

	retheme() {
		this.charts.forEach((c) => c.redraw(true));
	}

	destroy() {
		this.charts.forEach((c) => c.remove());
		this.charts = [];
	}
}

export function mount(main, args, query) {
	return new CompareView(main, query);
}
