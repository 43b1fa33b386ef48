/*
 * The Node page: what this machine is (topology, hardware class), what its
 * history takes on disk against the budget, which
 * collectors run and why the others do not, and live CPU, memory and GPU
 * charts of the node itself (the series of job 0) over the last 15 minutes.
 */
import { api, latestMap, list } from '../api.js';
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
	replace(main, head, grid, jobsHint, charts);

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
			await Promise.all(panels.map((p) => p.update(0, names, to - WINDOW_S, to, signal)));
			const jobs = list(await api('jobs?state=running', signal), 'jobs');
			replace(jobsHint, jobs.length ? card('Running now', h('ul', { class: 'chips' }, jobs.slice(0, 50).map((j) =>
				h('li', {}, link(j.workload || '(unnamed)', 'jobs', j.id), h('span', { class: 'muted' }, ` job ${j.id}`))))) : empty('No job is running on this node.',
				h('p', {}, 'Start one with the dlprof client (', h('code', {}, 'import dlprof'),
					'), or register one by hand:'),
				command(registerCommand())));
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
