/*
 * The Job page: one job live.  Its headline first: what holds it back, in
 * plain words, with the fix the tuner prices (GET /api/v1/jobs/{id}/report).
 * A distributed job's ranks next (GET /api/v1/jobs/{id}: each rank's node,
 * step time and share of it spent waiting in collectives), the straggler
 * the report names marked.  Then its throughput with the timeline of the
 * configs the tuner assigned laid over it (one strip per phase, a band and a
 * line at each switch), what every thread does (a heatmap), the story of
 * the job (its timeline), then step time, loss, CPU use and busy threads, IPC
 * and cache misses, GPU and memory where they are counted, the energy
 * attributed to it and its samples per joule, the config it runs now, the
 * phases the client found by itself in an unmodified script, and every
 * trial with its measured objective.  Its whole record (the series at the
 * resolution shown, configs, verdicts) downloads from the top.
 */
import { api, series, latestMap, obj, query, stepFor, firstSample, trial as normTrial, ApiError } from '../api.js';
import { h, replace, card, facts, table, badge, empty, command, link, when } from '../dom.js';
import { Panel } from '../panels.js';
import { ThroughputCard } from '../throughput.js';
import { ThreadsCard } from '../heatmap.js';
import { StoryCard } from '../story.js';
import { workloadHref } from './workload.js';
import * as fmt from '../format.js';

const TRIALS_SHOWN = 100;

/* Panels below the throughput, named as the collectors name their samples. */
function panelSpecs(collectorNote) {
	return [
		{ id: 'step', title: 'Step time', names: ['step_time_s'], yMin: 0 },
		{ id: 'loss', title: 'Loss', names: ['loss'], optional: true },
		{ id: 'phases', title: 'Time per step in each phase', perPhase: 'phase_time_s', yMin: 0, optional: true },
		{ id: 'cpu', title: 'CPU: cores used (of the CPUs allowed)', names: ['cpu.cores', 'cpu.thread_max_cores', 'sched.wait_cores', 'cpu.allowed'], yMin: 0,
			note: collectorNote(/^proc$/, 'CPU use') },
		{ id: 'threads', title: 'Threads: busy and all', names: ['cpu.busy_threads', 'cpu.threads', 'cpu.processes'], yMin: 0,
			note: collectorNote(/^proc$/, 'threads') },
		{ id: 'ipc', title: 'Instructions per cycle', names: ['perf.ipc', 'papi.ipc'], match: /(^|\.)ipc$/, yMin: 0, optional: true,
			note: collectorNote(/^(perf|papi|likwid)$/, 'IPC') },
		{ id: 'cache', title: 'Cache misses per second', names: ['perf.llc_misses_per_s', 'papi.cache_misses_per_s'], yMin: 0, optional: true,
			note: collectorNote(/^(perf|papi|likwid)$/, 'cache misses') },
		{ id: 'gpu', title: 'GPU utilisation', match: /^gpu\.(\d+\.)?util_percent$/, yMin: 0, optional: true,
			note: collectorNote(/^nvml$/, 'GPU use') },
		{ id: 'gpumem', title: 'GPU memory', match: /^gpu\.(\d+\.)?mem(_used)?_bytes$/, yMin: 0, optional: true },
		{ id: 'energy', title: 'Energy attributed to the job (J)', names: ['energy.cpu_joules', 'energy.gpu_joules'], yMin: 0, optional: true,
			note: collectorNote(/^(rapl|nvml)$/, 'energy') },
		{ id: 'mem', title: 'Memory (resident)', names: ['mem.rss_bytes'], yMin: 0, optional: true },
		{ id: 'sched', title: 'Context switches and migrations per second', yMin: 0, optional: true,
			names: ['sched.switches_per_s', 'perf.cpu_migrations_per_s'] },
	];
}

/* Names the panels above show; any other series is the job's own metric. */
const KNOWN = /^(samples_per_s|step_time_s|loss|phase_time_s|comm_wait_s)$|^(cpu|mem|gpu|perf|papi|likwid|sched|load|energy|auto)\.|^rank\d+\./;

function header(job) {
	const p = fmt.params(obj(job.params));
	const now = Date.now() / 1000;
	return [
		h('h1', { 'data-testid': 'job-title' }, job.workload || '(unnamed)'),
		badge(job.state || '–', job.state),
		h('span', { class: 'sub' }, `job ${job.id}`, p ? ` · ${p}` : '', ' · started ', when(job.started),
			` · ran ${fmt.duration((job.ended ?? now) - job.started)}`),
	];
}

/* The verdicts' names as a person reads them. */
const VERDICT_TITLES = {
	underuses_cpus: 'Uses far less than its CPUs',
	gpus_idle: 'GPUs mostly idle',
	oversubscribed: 'Oversubscribed',
	input_bound: 'Input-bound',
	memory_pressure: 'Memory pressure',
	imbalanced_threads: 'Imbalanced threads',
	communication_bound: 'Communication-bound',
	checkpoint_cost: 'Checkpoints cost',
	memory_bound: 'Memory-bound',
	compute_bound: 'Compute-bound',
	straggler: 'A straggler',
};

/* The headline: each verdict with its hint and fix, or that nothing holds the job back. */
function diagnosisCard(report) {
	if (!report)
		return null;
	const verdicts = report.verdicts || [];
	const notes = (report.undecided || []).map((n) => h('p', { class: 'chart-note' }, n));
	if (!verdicts.length)
		return h('section', { class: 'card diagnosis healthy', 'data-testid': 'diagnosis' },
			h('p', { class: 'headline' }, report.headline || 'No problem found.'), ...notes);
	return h('section', { class: 'card diagnosis', 'data-testid': 'diagnosis' },
		h('h2', {}, report.state === 'running' ? 'What holds this job back' : 'What held this job back'),
		h('ul', { class: 'verdicts' }, verdicts.map((v) => h('li', { 'data-testid': 'verdict-' + v.kind },
			h('strong', {}, VERDICT_TITLES[v.kind] || v.kind),
			h('span', { class: 'muted' }, v.active ? [' since ', when(v.since)] : [' ', when(v.since), ` for ${fmt.duration(v.until - v.since)}`]),
			h('p', {}, v.hint),
			v.fix ? h('p', { class: 'fix' }, 'Fix: ', h('code', {}, v.fix.text)) : null))),
		...notes);
}

/* A distributed job's ranks seen from this node, the straggler marked; null for a job of one process. */
function ranksCard(job, report) {
	const ranks = job.ranks || [];
	if (!ranks.length)
		return null;
	const slow = ((report && report.verdicts) || []).find((v) => v.kind === 'straggler');
	const cols = [
		{ label: 'Rank', cell: (k) => [String(k.rank), slow && slow.rank === k.rank ? [' ', badge('straggler', 'failed')] : null] },
		{ label: 'Node', cell: (k) => k.shared_by
			? [k.node, ' ', h('span', { class: 'muted', 'data-testid': 'rank-shared', title: 'read from the cluster store' }, `shared by ${k.shared_by}`)]
			: k.node },
		{ label: 'Local', num: true, wide: true, cell: (k) => (k.local_rank ?? '–').toString() },
		{ label: 'Pid', num: true, wide: true, cell: (k) => (k.pid ?? '–').toString() },
		{ label: 'Step time', num: true, cell: (k) => k.step_time_s == null ? '–' : fmt.num(k.step_time_s) + ' s' },
		{ label: 'Waiting', num: true, cell: (k) => k.comm_share == null ? '–' : fmt.pct(k.comm_share) },
		{ label: 'Data phase', num: true, wide: true, cell: (k) => k.data_time_s == null ? '–' : fmt.num(k.data_time_s) + ' s' },
		{ label: 'Samples/s', num: true, cell: (k) => k.samples_per_s == null ? '–' : fmt.num(k.samples_per_s) },
		{ label: 'CPU cores', num: true, wide: true, cell: (k) => k.cpu_cores == null ? '–' : fmt.num(k.cpu_cores, 2) },
		{ label: 'State', cell: (k) => badge(k.state, k.state) },
	];
	/* ranks_shared: this node has the cluster store, and the ranks it lacks were looked for there. */
	const elsewhere = job.ranks_elsewhere > 0
		? h('p', { class: 'chart-note', 'data-testid': 'ranks-elsewhere' }, job.ranks_shared
			? `${job.ranks_elsewhere} of its ${job.world_size} ranks run on other nodes that have not shared them yet` +
				(job.ranks_shared.as_of ? ` (cluster store read ${fmt.time(job.ranks_shared.as_of)}).` : '.')
			: `${job.ranks_elsewhere} of its ${job.world_size} ranks run on other nodes; this node shows its own.`) : null;
	return h('section', { class: 'card', 'data-testid': 'ranks' },
		h('h2', {}, `Ranks: ${ranks.length} of ${job.world_size}`),
		table(cols, ranks, (k) => slow && slow.rank === k.rank ? 'straggler' : null),
		h('p', { class: 'chart-note' }, 'Waiting: the share of a step the rank spends in collectives, waiting for the others. ' +
			'The job\'s throughput is all ranks\' together.'),
		elsewhere);
}

/*
 * The job's energy (GET /api/v1/jobs/{id}: energy) and samples per joule; a
 * figure not measured says why (the collector's reason), never 0.
 */
function energyCard(job) {
	const e = job.energy;
	if (!e)
		return null;
	const why = e.unavailable || {};
	const or = (v, k, f) => (v == null ? h('span', { class: 'muted' }, why[k] ? `not measured: ${why[k]}` : '–') : f(v));
	return h('section', { class: 'card', 'data-testid': 'energy' }, h('h2', {}, 'Energy'),
		facts([
			['CPU', or(e.cpu_joules, 'cpu', fmt.energy)],
			['GPU', or(e.gpu_joules, 'gpu', fmt.energy)],
			['Total', e.joules == null ? '–' : `${fmt.energy(e.joules)} (${fmt.num(e.kwh)} kWh)`],
			['Samples', fmt.num(e.samples)],
			['Samples per joule', or(e.samples_per_joule, 'samples_per_joule', (v) => h('strong', { 'data-testid': 'samples-per-joule' }, fmt.num(v)))],
		]),
		h('p', { class: 'chart-note' }, 'CPU energy (RAPL: packages and DRAM) is shared among jobs by their share of the node\'s busy CPU time; ' +
			'GPU energy by their processes\' share of each GPU\'s SM utilisation. Samples: the throughput the job reported, over time.'));
}

function configCard(job) {
	const cfg = obj(job.config) || {};
	const rows = [['whole job', fmt.config(cfg)]];
	for (const [ph, over] of Object.entries(cfg.phases || {}))
		rows.push([`phase ${ph}`, fmt.config(over)]);
	const knobs = obj(job.knobs);
	return card('Config it runs now',
		fmt.knobs(cfg).length ? facts(rows) : h('p', { class: 'muted' }, 'No config assigned yet.'),
		knobs && Object.keys(knobs).length
			? h('p', { class: 'chart-note' }, 'Knobs the job declared: ', h('code', {}, JSON.stringify(knobs))) : null);
}

/* Trials summed per phase and config: steps, time spent and the step-weighted mean. */
function byConfig(trials, now) {
	const groups = new Map();
	for (const t of trials) {
		const key = t.phase + '\n' + fmt.configKey(t.config);
		const g = groups.get(key) || { phase: t.phase, config: t.config, trials: 0, n: 0, sum: 0, time: 0 };
		g.trials++;
		if (t.n > 0 && Number.isFinite(t.mean)) {
			g.n += t.n;
			g.sum += t.n * t.mean;
		}
		g.time += Math.max(0, (t.end ?? now) - t.start);
		groups.set(key, g);
	}
	return [...groups.values()].map((g) => ({ ...g, mean: g.n ? g.sum / g.n : NaN }))
		.sort((a, b) => a.phase.localeCompare(b.phase) || b.mean - a.mean);
}

function trialsCard(trials, objective, now) {
	if (!trials.length)
		return card('Configs tried',  h('p', { class: 'muted' },
			'No trials yet: the tuner opens one when the job reports samples with the config it runs.'));
	const groups = byConfig(trials, now);
	const best = new Map();
	for (const g of groups)
		if (Number.isFinite(g.mean) && (!best.has(g.phase) || g.mean > best.get(g.phase).mean))
			best.set(g.phase, g);
	const shown = trials.slice(-TRIALS_SHOWN).reverse();
	return h('section', { class: 'card', 'data-testid': 'configs-tried' }, h('h2', {}, `Configs tried (${objective || 'throughput'})`),
		table([
			{ label: 'Phase', cell: (g) => g.phase || 'whole job' },
			{ label: 'Config', wrap: true, cell: (g) => fmt.config(g.config) },
			{ label: 'Trials', num: true, cell: (g) => String(g.trials) },
			{ label: 'Steps', num: true, cell: (g) => String(g.n) },
			{ label: 'Time', num: true, wide: true, cell: (g) => fmt.duration(g.time) },
			{ label: 'Mean', num: true, cell: (g) => fmt.num(g.mean) },
		], groups, (g) => (best.get(g.phase) === g ? 'best' : null)),
		h('p', { class: 'chart-note' }, 'Bold: the best config of each phase in this job.'),
		h('details', {}, h('summary', {}, trials.length > TRIALS_SHOWN
			? `Every trial: the latest ${TRIALS_SHOWN} of ${trials.length}` : `Every trial (${trials.length})`),
		table([
			{ label: 'Phase', cell: (t) => t.phase || 'whole job' },
			{ label: 'Config', wrap: true, cell: (t) => fmt.config(t.config) },
			{ label: 'From', wide: true, cell: (t) => when(t.start) },
			{ label: 'For', num: true, cell: (t) => (t.end ? fmt.duration(t.end - t.start) : 'now') },
			{ label: 'n', num: true, cell: (t) => String(t.n) },
			{ label: 'Mean', num: true, cell: (t) => fmt.num(t.mean) },
			{ label: '± std', num: true, wide: true, cell: (t) => fmt.num(t.std) },
		], shown)));
}

/*
 * The phases the client found by itself (the zero-touch path: the model's
 * top-level modules and the data loader), each with its share of a step,
 * as the auto.phase_share and auto.folded_share samples it sent once
 * carry them; [] for a job that sent none.
 */
async function foundPhases(id, phases, range, signal) {
	const rows = [];
	for (const ph of phases)
		for (const [name, folded] of [['auto.phase_share', false], ['auto.folded_share', true]]) {
			const s = await series(id, name, range[0], range[1], signal, false, ph);
			if (s.ys.length)
				rows.push({ phase: ph, share: s.ys[s.ys.length - 1], folded });
		}
	return rows.sort((a, b) => a.folded - b.folded || b.share - a.share);
}

function foundPhasesCard(rows) {
	if (!rows.length)
		return null;
	return card('Phases found in the script', table([
		{ label: 'Phase', cell: (r) => r.phase },
		{ label: 'Share of a step', num: true, cell: (r) => fmt.num(100 * r.share) + ' %' },
		{ label: 'Tuned', cell: (r) => (r.folded ? 'folded into the rest of the step' : 'as a phase of its own') },
	], rows), h('p', { class: 'chart-note' }, 'The script names no phases: dlprof took each top-level module of ' +
		'its model and the data loader, and folded those under a few percent of a step.'));
}

function detailsCard(job) {
	return card('Details', facts([
		['Objective', job.objective],
		['Phases', (job.phases || []).join(', ')],
		['Process', job.pid ? String(job.pid) : null],
		['External id', job.external_id],
		['Owner', Number.isInteger(job.uid) ? `uid ${job.uid}` : null],
		['Found by', job.source],
		['Command', job.command],
		['Hardware class', job.hw_class],
		['Ended', job.ended ? [when(job.ended), Number.isInteger(job.exit_status) ? `, exit status ${job.exit_status}` : ''] : null],
		['Workload', job.workload ? h('a', { href: workloadHref(job.workload, obj(job.params), job.objective) },
			'what was learned for ', job.workload) : null],
	]));
}

function nothingYet(id) {
	return empty('This job has reported nothing yet.',
		h('p', {}, 'Samples appear here as the dlprof client flushes them (about once a second), or post some:'),
		command(`curl -s -X POST -H 'Content-Type: application/json' \\\n  -d '{"samples":[{"t":'$(date +%s)',"name":"samples_per_s","value":100}]}' \\\n  ${location.origin}/api/v1/jobs/${id}/metrics`));
}

/* Links that download the job's whole record over the range shown, at the resolution shown. */
function recordLinks(id, range) {
	const q = query([['from', Math.floor(range[0])], ['to', Math.ceil(range[1])], ['step', stepFor(range[0], range[1])]]);
	const href = (format) => `api/v1/jobs/${encodeURIComponent(id)}/record?${q}&format=${format}`;
	return [h('span', { class: 'muted' }, 'Download its record (series as shown, configs, verdicts, story): '),
		h('a', { href: href('json'), download: `dlprofd-job-${id}.json`, 'data-testid': 'record-json' }, 'JSON'), ' · ',
		h('a', { href: href('csv'), download: `dlprofd-job-${id}.csv`, 'data-testid': 'record-csv' }, 'CSV (series)')];
}

/* Panels that need the job's processes; without a pid the page says so once. */
const PROCESS_PANELS = new Set(['cpu', 'threads', 'ipc', 'cache', 'gpu', 'gpumem', 'energy', 'mem', 'sched']);

/* Whether dlprofd has no process of the job to sample: no pid, no Slurm id, no sampled figure. */
function noProcess(job, names) {
	return !job.pid && !job.external_id && ![...names].some((n) => /^(cpu|mem|sched|perf|papi|gpu)\./.test(n));
}

class JobView {
	constructor(main, id) {
		this.main = main;
		this.id = id;
		this.title = 'job ' + id;
		this.every = 2;
		this.liveJob = id;
		this.node = null;
		this.polls = 0;
		this.earliest = null;   /* time of the job's first throughput sample, once there is one */
		this.head = h('div', { class: 'page-head' });
		this.diagBox = h('div');
		this.ranksBox = h('div');
		this.emptyBox = h('div');
		this.tp = new ThroughputCard();
		this.threads = new ThreadsCard(id);
		this.story = new StoryCard(id);
		this.recordBox = h('p', { class: 'chart-note record-links', 'data-testid': 'record' });
		this.panels = panelSpecs((re, what) => this.collectorNote(re, what))
			.map((sp) => new Panel({ ...sp, optionalAlways: !!sp.optional }));
		this.others = new Map();
		this.otherGrid = h('div', { class: 'grid two' });
		this.missingNote = h('p', { class: 'chart-note', 'data-testid': 'not-measured' });
		this.energyBox = h('div');
		this.cfgBox = h('div');
		this.trialsBox = h('div');
		this.foundBox = h('div');
		this.found = null;      /* the phases the client found, once it sent them: they do not change */
		this.detailsBox = h('div');
		replace(main, this.head, this.recordBox, this.diagBox, this.ranksBox, this.emptyBox, this.tp.el, this.threads.el, this.story.el,
			h('div', { class: 'grid two' }, this.panels.map((p) => p.el)),
			this.missingNote, this.otherGrid, this.energyBox, this.cfgBox, this.foundBox, this.trialsBox, this.detailsBox);
	}

	/* Why a panel is empty: what the collector that would fill it says, or that it has not sampled yet. */
	collectorNote(re, what) {
		return (inline) => {
			const cs = this.node ? (this.node.collectors || []).filter((x) => re.test(x.name)) : [];
			const c = cs.find((x) => x.reason);
			const why = c ? `${c.name}: ${c.reason}` : 'no samples yet';
			return inline ? `No ${what} for this job (${why}).` : `${what} (${why})`;
		};
	}

	async refresh(signal) {
		let job;
		try {
			job = await api(`jobs/${encodeURIComponent(this.id)}`, signal);
		} catch (e) {
			if (e instanceof ApiError && (e.status === 404 || e.status === 400)) {
				replace(this.main, empty(`No job ${this.id} here.`, h('p', {}, link('See the jobs this node knows.', 'jobs'))));
				this.every = 0;
				this.liveJob = undefined;
				return;
			}
			throw e;
		}
		/* Collectors settle in the daemon's first seconds: re-read their status now and then. */
		if (!this.node || ++this.polls % 15 === 0 || (this.node.collectors || []).some((c) => c.status !== 'available' && !c.reason))
			this.node = await api('node', signal).catch(() => this.node);
		const trials = (job.trials || []).map(normTrial);
		const range = await this.span(job, trials, signal);
		const latest = latestMap(job.latest);
		const names = new Set(latest.keys());
		replace(this.head, ...header(job));
		/* A daemon without the report (older, or diagnosis off) shows no headline. */
		const report = await api(`jobs/${encodeURIComponent(this.id)}/report`, signal).catch((e) => {
			if (e.name === 'AbortError')
				throw e;
			return null;
		});
		replace(this.diagBox, diagnosisCard(report));
		replace(this.ranksBox, ranksCard(job, report));
		this.tp.update(latest, trials, range, job.state === 'running',
			await series(this.id, 'samples_per_s', range[0], range[1], signal));
		replace(this.emptyBox, names.size ? null : nothingYet(this.id));
		if (!this.found && (names.has('auto.phase_share') || names.has('auto.folded_share'))) {
			this.found = await foundPhases(this.id, job.phases || [], range, signal);
			replace(this.foundBox, foundPhasesCard(this.found));
		}
		replace(this.recordBox, ...recordLinks(this.id, range));
		await this.threads.update(range, signal, noProcess(job, names) ? null : 'the sampler reads each thread once a store interval; none read yet');
		await this.story.update(signal);
		await this.updatePanels(job, names, range, signal);
		replace(this.energyBox, energyCard(job));
		replace(this.cfgBox, configCard(job));
		const open = !!this.trialsBox.querySelector('details[open]');
		replace(this.trialsBox, trialsCard(trials, job.objective, range[1]));
		if (open)
			this.trialsBox.querySelector('details').open = true;
		replace(this.detailsBox, detailsCard(job));
		this.every = job.state === 'running' ? 2 : 0;
		if (!this.every)
			this.liveJob = undefined;
	}

	/*
	 * The span shown: the job's life, widened to samples stamped before its
	 * registration (clock skew, a job found late) and to its trials.
	 */
	async span(job, trials, signal) {
		if (this.earliest === null)
			this.earliest = await firstSample(this.id, job.started, signal);
		const to = job.ended ?? Date.now() / 1000;
		const from = Math.min(job.started, this.earliest ?? Infinity, ...trials.map((t) => t.start).filter(Number.isFinite));
		return [from, Math.max(to, from + 10)];
	}

	async updatePanels(job, names, range, signal) {
		const none = noProcess(job, names);
		for (const p of this.panels)
			if (PROCESS_PANELS.has(p.spec.id))
				p.spec.optional = none || p.spec.optionalAlways;
		/* Phases folded into the rest of the step have no time of their own. */
		const folded = new Set((this.found || []).filter((r) => r.folded).map((r) => r.phase));
		const phases = (job.phases || []).filter((ph) => !folded.has(ph));
		await Promise.all(this.panels.map((p) => p.update(this.id, names, range[0], range[1], signal, phases)));
		const missing = this.panels.map((p) => p.missing()).filter(Boolean);
		this.missingNote.textContent = none
			? 'The job was registered without a pid, so dlprofd has no process to sample: no CPU, threads, memory, counters or GPU figures.'
			: missing.length ? 'Not measured for this job: ' + missing.join('; ') + '.' : '';
		await this.updateOthers(names, range, signal);
	}

	/* The job's own metrics (what it passed to s.step(**metrics)): one small chart each. */
	async updateOthers(names, range, signal) {
		const extra = [...names].filter((n) => !KNOWN.test(n)).sort().slice(0, 8);
		for (const [n, p] of this.others)
			if (!extra.includes(n)) {
				p.destroyChart();
				p.el.remove();
				this.others.delete(n);
			}
		for (const n of extra)
			if (!this.others.has(n)) {
				const p = new Panel({ id: 'metric-' + n, title: n, names: [n] });
				this.others.set(n, p);
				this.otherGrid.append(p.el);
			}
		await Promise.all([...this.others.values()].map((p) => p.update(this.id, names, range[0], range[1], signal)));
	}

	/* The live stream's tick: the sampled panels take its values at once. */
	onLive(ev) {
		this.panels.forEach((p) => p.appendLive(ev.t, ev.values || {}));
		this.others.forEach((p) => p.appendLive(ev.t, ev.values || {}));
	}

	retheme() {
		this.tp.retheme();
		this.threads.retheme();
		this.panels.forEach((p) => p.retheme());
		this.others.forEach((p) => p.retheme());
	}

	destroy() {
		this.tp.destroy();
		this.threads.destroy();
		this.panels.forEach((p) => p.destroyChart());
		this.others.forEach((p) => p.destroyChart());
	}
}

export function mount(main, args) {
	return new JobView(main, args[0]);
}
