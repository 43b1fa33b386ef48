/*
 * The story of a job (GET /api/v1/jobs/{id}/timeline): started, each config
 * it ran and why, each phase override, each verdict raised and cleared,
 * ranks joined and left, ended with its status, in time order, each line in
 * the daemon's own words with its time (local, UTC on hover).  Its events
 * download as CSV or JSON like a chart's numbers.
 */
import { api } from './api.js';
import { h, replace, card, when, badge } from './dom.js';
import { tools, csvText } from './datatools.js';

/* How a kind of event reads in its badge, and the badge's colour class. */
const KINDS = {
	started: ['started', 'running'],
	ended: ['ended', 'ended'],
	config: ['config', 'learned'],
	phase_override: ['phase', 'learned'],
	verdict_raised: ['verdict', 'failed'],
	verdict_cleared: ['cleared', 'running'],
	rank_joined: ['rank', 'default'],
	rank_left: ['rank', 'default'],
};

export class StoryCard {
	constructor(jobId) {
		this.id = jobId;
		this.events = [];
		this.list = h('ol', { class: 'story', 'data-testid': 'story-events' });
		this.box = h('div', { class: 'story-box', tabindex: 0, role: 'region', 'aria-label': 'The story of this job' }, this.list);
		this.tools = tools({ name: `job-${jobId}-story`, title: 'The story of this job', x: { time: true }, series: [],
			columns: () => [[]] }, {
			table: () => [h('p', { class: 'chart-note' }, 'The list above is the table: one event a line.')],
			csv: () => csvText(['t_unix', 'time_utc', 'kind', 'text'],
				this.events.map((e) => [e.t, new Date(e.t * 1000).toISOString(), e.kind, e.text])),
			json: () => JSON.stringify(this.events, null, 1) + '\n',
		});
		this.tools.el.querySelector('details').hidden = true;
		this.el = card('The story of this job', this.box, this.tools.el,
			h('p', { class: 'chart-note' }, 'Configs say why the tuner gave them; verdicts are the diagnosis of the stored figures over the job\'s whole life.'));
		this.el.dataset.testid = 'story';
	}

	async update(signal) {
		const body = await api(`jobs/${encodeURIComponent(this.id)}/timeline`, signal);
		this.events = body.events || [];
		replace(this.list, this.events.map((e) => {
			const [label, cls] = KINDS[e.kind] || [e.kind, 'default'];
			return h('li', { 'data-kind': e.kind }, when(e.t), ' ', badge(label, cls), ' ', h('span', {}, e.text));
		}));
	}
}
