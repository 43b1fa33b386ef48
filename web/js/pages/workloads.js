/*
 * The Workloads page: every workload the daemon has learned about, with its
 * best known config, that config's objective, the confidence and the number
 * of trials; each links to its learned surface.
 */
import { api, list as listOf, obj } from '../api.js';
import { h, replace, table, badge, empty, command } from '../dom.js';
import { workloadHref } from './workload.js';
import * as fmt from '../format.js';

function workloadsTable(list) {
	const best = (w) => obj(w.best) || {};
	return table([
		{ label: 'Workload', wrap: true, cell: (w) => [h('a', { href: workloadHref(w.name, obj(w.params), w.objective) }, w.name || '(unnamed)'),
			fmt.params(obj(w.params)) ? h('div', { class: 'muted' }, fmt.params(obj(w.params))) : null] },
		{ label: 'Best config', wrap: true, cell: (w) => fmt.config(obj(best(w).config)) },
		{ label: 'Best mean', num: true, wide: true, cell: (w) => fmt.num(best(w).mean) },
		{ label: 'Objective', wide: true, cell: (w) => w.objective || '–' },
		{ label: 'Confidence', num: true, wide: true, cell: (w) => (Number.isFinite(w.confidence) ? fmt.pct(w.confidence) : '–') },
		{ label: 'Trials', num: true, cell: (w) => fmt.num(w.trials) },
		{ label: 'Jobs', num: true, wide: true, cell: (w) => fmt.num(w.jobs) },
		{ label: 'Phases', wide: true, wrap: true, cell: (w) => (w.phases || []).filter(Boolean).join(', ') },
		{ label: 'Source', wide: true, cell: (w) => (w.source ? [badge(w.source, w.source === 'learned' ? 'learned' : 'default'),
			w.other_class ? h('div', { class: 'muted' }, `prior from ${w.other_class.hw_class}`) : null] : '–') },
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
			list.sort((a, b) => String(a.name).localeCompare(String(b.name)) || (b.trials || 0) - (a.trials || 0));
			replace(body, h('section', { class: 'card' }, workloadsTable(list)));
		},
	};
}
