/*
 * The Workloads page: every workload the daemon has learned about, with its
 * best known config, that config's objective, the confidence and the number
 * of trials; each links to its learned surface.
 */
import { api, list as listOf, obj } from '../api.js';
import { h, replace, link, table, badge, empty, command } from '../dom.js';
import * as fmt from '../format.js';

export function bestOf(w) {
	const b = obj(w.best) || {};
	const config = obj(b.config) || obj(w.config) || (b.intra_threads !== undefined ? b : null);
	return {
		config,
		value: b.mean ?? b.objective_value ?? b.value ?? w.best_mean ?? w.mean,
		n: b.n,
	};
}

export function confidence(w) {
	const c = w.confidence ?? obj(w.best)?.confidence;
	return Number.isFinite(c) ? fmt.pct(c) : '–';
}

function workloadsTable(list) {
	return table([
		{ label: 'Workload', wrap: true, cell: (w) => [link(w.name || '(unnamed)', 'workloads', w.name),
			fmt.params(obj(w.params)) ? h('div', { class: 'muted' }, fmt.params(obj(w.params))) : null] },
		{ label: 'Best config', wrap: true, cell: (w) => fmt.config(bestOf(w).config) },
		{ label: 'Objective', num: true, cell: (w) => fmt.num(bestOf(w).value) },
		{ label: 'Confidence', num: true, wide: true, cell: confidence },
		{ label: 'Trials', num: true, cell: (w) => fmt.num(w.trials ?? w.n_trials) },
		{ label: 'Jobs', num: true, wide: true, cell: (w) => fmt.num(w.jobs) },
		{ label: 'Source', wide: true, cell: (w) => (w.source ? badge(w.source) : '–') },
		{ label: 'Hardware class', wide: true, wrap: true, cell: (w) => w.hw_class || '–' },
	], list);
}

export function mount(main) {
	const body = h('div', { 'data-testid': 'workloads' });
	replace(main, h('div', { class: 'page-head' }, h('h1', {}, 'Workloads'),
		h('span', { class: 'sub' }, 'what the daemon learned per workload on this hardware')), body);
	return {
		title: 'workloads',
		every: 10,
		async refresh(signal) {
			const list = listOf(await api('workloads', signal), 'workloads');
			if (!list.length) {
				replace(body, empty('No workloads yet.',
					h('p', {}, 'A workload appears once a job registers with a workload name, e.g. with the dlprof client (',
						h('code', {}, 'dlprof.session(workload="my-model")'), ') or:'),
					command(`curl -s -X POST -H 'Content-Type: application/json' \\\n  -d '{"workload":"my-model","params":{"batch":64}}' \\\n  ${location.origin}/api/v1/jobs`),
					h('p', {}, 'Even before any trial, a job script can ask for a first guess from the topology:'),
					command(`eval "$(curl -s '${location.origin}/api/v1/recommend?workload=my-model&format=env')"`)));
				return;
			}
			list.sort((a, b) => String(a.name).localeCompare(String(b.name)));
			replace(body, h('section', { class: 'card' }, workloadsTable(list)));
		},
	};
}
