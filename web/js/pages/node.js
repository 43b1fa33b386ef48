/*
 * The Node page: what this machine is (topology, hardware class), what its
 * history takes on disk against the budget, which collectors run and why
 * the others do not, the running jobs as one compact table that stays
 * readable at fifty (each job's share of the CPUs as a bar, sortable,
 * filterable, from the one jobs answer: no request per job), and live CPU,
 * memory and GPU charts of the node itself (the series of job 0) over the
 * last 15 minutes.
 */
import { api, latestMap, list, obj } from '../api.js';
import { h, replace, card, facts, table, badge, empty, command, link } from '../dom.js';
import { Panel } from '../panels.js';
import * as fmt from '../format.js';

const WINDOW_S = 15 * 60;

/*
 * Names tried when the node answer carries no `latest` map to tell which
 * series exist; a name without samples just leaves its panel empty.
 */
const GUESS = ['cpu.cores', 'cpu.iowait_cores', 'cpu.steal_cores', 'cpu.count', 'mem.used_bytes', 'mem.total_bytes',
	'load.1', 'sched.runnable'];

function topo(n) {
	const t = n.topology && typeof n.topology === 'object' ? { ...n, ...n.topology } : n;
	const per = Array.isArray(t.numa) ? t.numa.map((d) => d.cores) : t.numa_cores;
	const numa = Array.isArray(per) && per.length
		? `${t.numa_nodes ?? per.length} (${per.join(' + ')} physical cores)` : t.numa_nodes;
	const mem = Number.isFinite(t.mem_total_kb) ? fmt.bytes(t.mem_total_kb * 1024)
		: Number.isFinite(t.mem_total_bytes) ? fmt.bytes(t.mem_total_bytes) : null;
	const likwid = (n.collectors || []).find((c) => c.detail && Array.isArray(c.detail.caches));
	const caches = likwid ? likwid.detail.caches.map((c) => `L${c.level} ${fmt.bytes(c.size_bytes)}`
		+ (c.shared_by_threads > 1 ? ` (shared by ${c.shared_by_threads})` : '')).join(', ') : null;
	return facts([
		['Hostname', n.hostname],
		['Hardware class', n.hw_class],
		['CPU', t.cpu_model],
		['Architecture', t.arch],
		['Sockets', t.sockets],
		['Physical cores', t.cores],
		['Threads per core', t.threads_per_core],
		['Logical CPUs', t.cpus_online],
		['CPUs dlprofd may use', t.cpus_allowed_list ? `${t.cpus_allowed} (${t.cpus_allowed_list})` : t.cpus_allowed],
		['NUMA domains', numa],
		['GPUs', t.gpus],
		['Memory', mem],
		['Caches', caches],
		['dlprofd', n.daemon ? [n.daemon.version, n.daemon.allocator && `allocator ${n.daemon.allocator}`].filter(Boolean).join(', ') : n.version],
		['History on disk', storage(n.store)],
	]);
}

/* "412 MiB of 1.0 GiB budget · raw 24 h 0 min · second 13 d 2 h ...": the store against its budget, and the span each tier holds. */
function storage(st) {
	if (!st)
		return null;
	const tiers = Object.entries(st.tiers || {}).filter(([, t]) => t && Number.isFinite(t.from))
		.map(([name, t]) => `${name} ${fmt.duration(t.to - t.from)}`);
	return [`${fmt.bytes(st.bytes)} of ${st.budget_bytes ? fmt.bytes(st.budget_bytes) : 'no'} budget`, ...tiers].join(' · ');
}

function collectors(cols) {
	if (!Array.isArray(cols) || !cols.length)
		return h('p', { class: 'muted' }, 'The daemon reports no collectors.');
	return table([
		{ label: 'Collector', cell: (c) => c.name },
		{ label: 'Status', cell: (c) => (c.status === 'starting'
			? badge('starting', 'default') : badge(c.status || '–', c.status === 'available' ? 'available' : 'unavailable')) },
		{ label: 'Reason', wrap: true, cell: (c) => c.reason || '' },
	], cols);
}

/* The running jobs' columns: label, the value it sorts by, and the cell. */
function jobColumns(cpus) {
	const v = (j, n) => latestMap(j.latest).get(n)?.value;
	return [
		{ key: 'id', label: 'Job', num: true, sort: (j) => j.id, cell: (j) => link(String(j.id), 'jobs', j.id) },
		{ key: 'workload', label: 'Workload', wrap: true, sort: (j) => String(j.workload || ''),
			cell: (j) => [link(j.workload || '(unnamed)', 'jobs', j.id), fmt.params(obj(j.params)) ? h('span', { class: 'muted' }, ' ' + fmt.params(obj(j.params))) : null] },
		{ key: 'cores', label: 'CPU (cores)', sort: (j) => v(j, 'cpu.cores') ?? -1, cell: (j) => {
			const c = v(j, 'cpu.cores'), of = v(j, 'cpu.allowed') || cpus || 1;
			return h('div', { class: 'bar-cell', title: `${fmt.num(c)} of ${fmt.num(of)} CPUs it may use` },
				h('span', { class: 'bar', style: `width:${Math.min(100, Math.max(0, (c || 0) / of * 100)).toFixed(1)}%` }),
				h('span', { class: 'bar-text' }, Number.isFinite(c) ? `${fmt.num(c, 2)} / ${fmt.num(of)}` : '–'));
		} },
		{ key: 'threads', label: 'Busy threads', num: true, wide: true, sort: (j) => v(j, 'cpu.busy_threads') ?? -1,
			cell: (j) => `${fmt.num(v(j, 'cpu.busy_threads'))} / ${fmt.num(v(j, 'cpu.threads'))}` },
		{ key: 'sps', label: 'samples/s', num: true, sort: (j) => v(j, 'samples_per_s') ?? -1, cell: (j) => fmt.num(v(j, 'samples_per_s')) },
		{ key: 'user', label: 'User', wide: true, sort: (j) => j.uid ?? -1, cell: (j) => (Number.isInteger(j.uid) ? `uid ${j.uid}` : '–') },
		{ key: 'ran', label: 'Ran', num: true, wide: true, sort: (j) => -j.started,
			cell: (j) => h('span', { title: `started ${fmt.utc(j.started)}` }, fmt.duration(Date.now() / 1000 - j.started)) },
	];
}

/*
 * The running jobs, sorted by the column chosen (CPU first) and filtered
 * by a text a job's workload, id, params or user contains.  A header's
 * button sorts; the filter keeps its text across refreshes.
 */
class RunningJobs {
	constructor() {
		this.sortKey = 'cores';
		this.desc = true;
		this.jobs = [];
		this.cpus = 0;
		this.filter = h('input', { type: 'search', placeholder: 'Filter: workload, job, user…', 'aria-label': 'Filter the running jobs',
			'data-testid': 'job-filter' });
		this.filter.addEventListener('input', () => this.render());
		this.count = h('span', { class: 'muted' });
		this.body = h('div', { 'data-testid': 'running-jobs' });
		this.el = h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Running jobs'), this.count, this.filter),
			this.body);
	}

	/* What the jobs take together: " · 3.2 of 64 CPUs busy · 12,000 samples/s". */
	summary() {
		const sum = (n) => this.jobs.reduce((s, j) => s + (latestMap(j.latest).get(n)?.value || 0), 0);
		const sps = sum('samples_per_s');
		return ` · ${fmt.num(sum('cpu.cores'), 2)} of ${fmt.num(this.cpus)} CPUs busy` + (sps ? ` · ${fmt.num(sps)} samples/s` : '');
	}

	update(jobs, cpus) {
		this.jobs = jobs;
		this.cpus = cpus;
		this.render();
	}

	render() {
		const cols = jobColumns(this.cpus);
		const q = this.filter.value.trim().toLowerCase();
		const shown = this.jobs.filter((j) => !q || [j.id, j.workload, fmt.params(obj(j.params)), j.uid, j.external_id]
			.some((x) => x !== null && x !== undefined && String(x).toLowerCase().includes(q)));
		const by = cols.find((c) => c.key === this.sortKey) || cols[0];
		shown.sort((a, b) => {
			const x = by.sort(a), y = by.sort(b);
			const c = typeof x === 'string' ? x.localeCompare(y) : x - y;
			return (this.desc ? -c : c) || a.id - b.id;
		});
		this.count.textContent = (q ? `${shown.length} of ${this.jobs.length}` : `${this.jobs.length}`) + this.summary();
		const t = table(cols, shown);
		/* Headers become sort buttons: a table of fifty is read by its busiest first. */
		t.querySelectorAll('thead th').forEach((th, i) => {
			const c = cols[i];
			const btn = h('button', { type: 'button', class: 'sort' }, c.label);
			btn.addEventListener('click', () => {
				this.desc = this.sortKey === c.key ? !this.desc : true;
				this.sortKey = c.key;
				this.render();
			});
			th.setAttribute('aria-sort', c.key === this.sortKey ? (this.desc ? 'descending' : 'ascending') : 'none');
			replace(th, btn);
		});
		t.classList.add('compact', 'scroll-rows');
		t.tabIndex = 0;
		t.setAttribute('role', 'region');
		t.setAttribute('aria-label', 'Running jobs');
		replace(this.body, shown.length ? t : h('p', { class: 'muted' }, 'No running job matches.'));
	}
}

export function mount(main) {
	const head = h('div', { class: 'page-head' }, h('h1', {}, 'Node'), h('span', { class: 'sub' }));
	const topoBox = card('Topology');
	const collBox = card('Collectors');
	let node = null;
	const panels = [
		new Panel({ id: 'node-cpu', title: 'CPU: busy cores (of all CPUs)', names: ['cpu.cores', 'cpu.iowait_cores', 'cpu.steal_cores', 'cpu.count'], yMin: 0 }),
		new Panel({ id: 'node-mem', title: 'Memory: used (of total)', names: ['mem.used_bytes', 'mem.total_bytes'], yMin: 0 }),
		new Panel({ id: 'node-load', title: 'Load', names: ['load.1', 'sched.runnable'], yMin: 0, optional: true }),
		new Panel({ id: 'node-gpu', title: 'GPU utilisation', match: /^gpu\.\d+\.util_percent$/, yMin: 0, optional: true }),
		new Panel({ id: 'node-gpumem', title: 'GPU memory used', match: /^gpu\.\d+\.mem_used_bytes$/, yMin: 0, optional: true }),
		new Panel({ id: 'node-power', title: 'Power (W): CPU packages and DRAM (RAPL), each GPU', names: ['power.cpu_watts'],
			match: /^gpu\.\d+\.power_watts$/, yMin: 0, optional: true }),
	];
	const grid = h('div', { class: 'grid two' }, topoBox, collBox);
	const charts = h('div', { class: 'grid two' }, panels.map((p) => p.el));
	const jobsHint = h('div');
	const running = new RunningJobs();
	/* The jobs first: fifty of them scroll in their own box, so the charts stay near the top. */
	replace(main, head, jobsHint, charts, grid);

	return {
		title: 'node',
		every: 5,
		liveJob: 0,
		onLive(ev) {
			panels.forEach((p) => p.appendLive(ev.t, ev.values || {}));
		},
		async refresh(signal) {
			node = await api('node', signal);
			head.lastChild.textContent = [node.hostname, node.hw_class].filter(Boolean).join(' · ');
			replace(topoBox, h('h2', {}, 'Topology'), topo(node));
			replace(collBox, h('h2', {}, 'Collectors'), collectors(node.collectors));
			let names;
			if (node.latest) {
				names = new Set(latestMap(node.latest).keys());
			} else {
				names = new Set(GUESS);
				for (let i = 0; i < (node.topology?.gpus ?? node.gpus ?? 0); i++)
					names.add(`gpu.${i}.util_percent`).add(`gpu.${i}.mem_used_bytes`);
			}
			const to = Date.now() / 1000;
			const [jobsAnswer] = await Promise.all([api('jobs?state=running', signal),
				...panels.map((p) => p.update(0, names, to - WINDOW_S, to, signal))]);
			const jobs = list(jobsAnswer, 'jobs');
			const t = node.topology && typeof node.topology === 'object' ? node.topology : node;
			if (jobs.length) {
				running.update(jobs, t.cpus_allowed || t.cpus_online || 0);
				if (jobsHint.firstChild !== running.el)
					replace(jobsHint, running.el);
			} else {
				replace(jobsHint, empty('No job is running on this node.',
					h('p', {}, 'Start one with the dlprof client (', h('code', {}, 'import dlprof'),
						'), or register one by hand:'),
					command(registerCommand())));
			}
		},
		retheme() {
			panels.forEach((p) => p.retheme());
		},
		destroy() {
			panels.forEach((p) => p.destroyChart());
		},
	};
}

/* The curl line that registers a job with this daemon. */
export function registerCommand() {
	return `curl -s -X POST -H 'Content-Type: application/json' \\\n  -d '{"workload":"my-model","params":{"batch":64}}' \\\n  ${location.origin}/api/v1/jobs`;
}
