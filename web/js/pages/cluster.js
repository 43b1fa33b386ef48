/*
 * The Cluster page: what every node sharing this node's cluster store
 * learned, per workload: on which hardware classes, from how many nodes and
 * jobs, and per variant (parameters, objective, class) the best config
 * measured.  Read from the shared store by the daemon's cluster thread, so
 * the page also says how fresh that view is and whether the link is up.
 */
import { api, list as listOf, obj } from '../api.js';
import { h, replace, table, badge, empty, facts, card } from '../dom.js';
import * as fmt from '../format.js';

/* One row per variant, the workload's totals on its first row. */
function rows(workloads) {
	const out = [];
	for (const w of workloads) {
		const variants = listOf(w, 'variants');
		(variants.length ? variants : [{}]).forEach((v, i) => out.push({ w, v, first: i === 0 }));
	}
	return out;
}

function workloadsTable(workloads) {
	return table([
		{ label: 'Workload', wrap: true, cell: (r) => (r.first ? h('strong', {}, r.w.name || '(unnamed)') : '') },
		{ label: 'Parameters', wrap: true, cell: (r) => fmt.params(obj(r.v.params)) || '–' },
		{ label: 'Class', wrap: true, cell: (r) => r.v.hw_class || '–' },
		{ label: 'Best config', wrap: true, cell: (r) => fmt.config(obj(obj(r.v.best).config)) },
		{ label: 'Best mean', num: true, wide: true, cell: (r) => fmt.num(obj(r.v.best).value) },
		{ label: 'Objective', wide: true, cell: (r) => r.v.objective || '–' },
		{ label: 'Nodes', num: true, cell: (r) => fmt.num(r.v.nodes) },
		{ label: 'Jobs', num: true, wide: true, cell: (r) => fmt.num(r.v.jobs) },
		{ label: 'Trials', num: true, cell: (r) => fmt.num(r.v.trials) },
		{ label: 'Last trial', wide: true, cell: (r) => fmt.ago(r.v.updated) },
	], rows(workloads));
}

function linkFacts(c, asOf) {
	const state = c.connected ? badge('connected', 'learned') : badge('not connected', 'default');
	return facts([
		['Shared store', state],
		['This node', c.node ? `${c.node} (${c.hw_class})` : null],
		['Last error', c.connected ? null : c.error],
		['Waiting to be sent', fmt.num(obj(c.outbox).waiting)],
		['Dropped (outbox full)', obj(c.outbox).dropped ? fmt.num(obj(c.outbox).dropped) : null],
		['Trials sent / learned from others', `${fmt.num(c.pushed)} / ${fmt.num(c.pulled)}`],
		['View read', asOf ? fmt.ago(asOf) : 'not yet'],
	]);
}

export function mount(main) {
	const body = h('div', { 'data-testid': 'cluster' });
	replace(main, h('div', { class: 'page-head' }, h('h1', {}, 'Cluster'),
		h('span', { class: 'sub' }, 'what every node sharing this cluster store learned')), body);
	return {
		title: 'cluster',
		every: 10,
		async refresh(signal) {
			const answer = obj(await api('cluster/workloads', signal));
			const c = obj(answer.cluster);
			if (!c.configured) {
				replace(body, empty('This node learns alone.',
					h('p', {}, 'Set cluster_store in dlprofd.conf to a PostgreSQL connection string; every node of the '
						+ 'same hardware class then learns from the trials of all the others. See dlprofd.conf(5).')));
				return;
			}
			const workloads = listOf(answer, 'workloads');
			workloads.sort((a, b) => String(a.name).localeCompare(String(b.name)));
			replace(body, card('Link', linkFacts(c, answer.as_of)),
				workloads.length ? h('section', { class: 'card' }, workloadsTable(workloads))
					: empty('No trials shared yet.', h('p', {}, 'Workloads appear here once a node of the cluster completes a trial.')));
		},
	};
}
