/*
 * The Jobs page: running and recent jobs with their workload, owner,
 * current config, latest throughput and CPU use; a filter for running,
 * ended or all; a box on each row to put two to eight jobs side by side
 * (compare.js); and, with no jobs, the commands that make one.
 */
import { api, latestMap, list, obj } from '../api.js';
import { h, replace, link, table, badge, empty, command, when, compareHref } from '../dom.js';
import { registerCommand } from './node.js';
import * as fmt from '../format.js';

const STATES = ['running', 'ended', 'all'];

function owner(j) {
	if (j.user)
		return String(j.user);
	return Number.isInteger(j.uid) ? `uid ${j.uid}` : '–';
}

function workloadCell(j) {
	const p = fmt.params(obj(j.params));
	return [link(j.workload || '(unnamed)', 'jobs', j.id), p ? h('div', { class: 'muted' }, p) : null];
}

function jobsTable(jobs, picked, onPick) {
	const now = Date.now() / 1000;
	const box = (j) => {
		const b = h('input', { type: 'checkbox', 'data-job': String(j.id), 'aria-label': `compare job ${j.id}`,
			checked: picked.has(String(j.id)) ? true : null });
		b.addEventListener('change', () => onPick(String(j.id), b.checked));
		return b;
	};
	return table([
		{ label: 'Pick', cell: box },
		{ label: 'Job', num: true, cell: (j) => link(String(j.id), 'jobs', j.id) },
		{ label: 'Workload', wrap: true, cell: workloadCell },
		{ label: 'State', cell: (j) => badge(j.state || '–', j.state) },
		{ label: 'User', wide: true, cell: owner },
		{ label: 'Config', wrap: true, wide: true, cell: (j) => fmt.config(obj(j.config)) },
		{ label: 'samples/s', num: true, cell: (j) => fmt.num(latestMap(j.latest).get('samples_per_s')?.value) },
		{ label: 'Cores used', num: true, wide: true, cell: (j) => fmt.num(latestMap(j.latest).get('cpu.cores')?.value) },
		{ label: 'Started', wide: true, cell: (j) => when(j.started) },
		{ label: 'Ran', num: true, cell: (j) => fmt.duration((j.ended ?? now) - j.started) },
	], jobs);
}

export function mount(main, args, query) {
	const st = STATES.includes(query.get('state')) ? query.get('state') : 'all';
	const filters = h('nav', { class: 'filters', 'aria-label': 'Job state' },
		STATES.map((s) => h('a', { href: '#/jobs?state=' + s, class: s === st ? 'active' : null }, s)));
	const body = h('div', { 'data-testid': 'jobs' });
	/* The ticked jobs stay ticked across refreshes; the button opens them side by side. */
	const picked = new Set();
	const go = h('button', { type: 'button', 'data-testid': 'compare-go' }, 'Compare');
	const note = h('span', { class: 'muted', 'aria-live': 'polite' });
	const sync = () => {
		go.disabled = picked.size < 2 || picked.size > 8;
		note.textContent = picked.size ? `${picked.size} ticked` + (picked.size > 8 ? ' (eight at most)' : '') : 'tick two to eight jobs';
	};
	go.addEventListener('click', () => { location.hash = compareHref([...picked]); });
	const onPick = (id, on) => {
		if (on)
			picked.add(id);
		else
			picked.delete(id);
		sync();
	};
	sync();
	replace(main, h('div', { class: 'page-head' }, h('h1', {}, 'Jobs'), filters, h('span', { class: 'compare-bar' }, go, ' ', note)), body);
	return {
		title: 'jobs',
		every: 5,
		async refresh(signal) {
			const jobs = list(await api('jobs?state=' + st, signal), 'jobs');
			jobs.sort((a, b) => (a.state === 'running' ? 0 : 1) - (b.state === 'running' ? 0 : 1) || b.started - a.started);
			if (!jobs.length) {
				replace(body, empty(st === 'ended' ? 'No ended jobs yet.' : st === 'running' ? 'No job is running.' : 'No jobs yet.',
					h('p', {}, 'Run a job with the dlprof client:'),
					command('import dlprof\nwith dlprof.session(workload="my-model", params={"batch": 64}) as s:\n    for batch in data:\n        ...\n        s.step(samples=len(batch), loss=loss.item())'),
					h('p', {}, 'or register one with curl:'),
					command(registerCommand())));
				return;
			}
			replace(body, h('section', { class: 'card' }, jobsTable(jobs, picked, onPick)));
		},
	};
}
