/*
 * The job page's main card: the job's latest figures, its throughput over
 * its life with the timeline of configs laid over it (charts.js draws the
 * strips and bands), a legend of the configs' colours, and a line saying
 * which config ran at the cursor.
 */
import { Chart, joinSeries, timelineModel, timelinePlugin, timelinePadding, theme } from './charts.js';
import { h, replace, card } from './dom.js';
import { label } from './panels.js';
import * as fmt from './format.js';

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

/* The legend of the timeline: each config's colour and label. */
function legend(model) {
	const th = theme();
	if (!model.lanes.length)
		return h('p', { class: 'chart-note' }, 'No config switches yet.');
	return h('ul', { class: 'chips', 'data-testid': 'timeline-legend' },
		[...model.colors.entries()].map(([text, i]) => h('li', {},
			h('span', { class: 'swatch', style: `background:${th.palette[i % th.palette.length]}` }), text)));
}

export class ThroughputCard {
	constructor() {
		this.statsEl = h('div');
		this.chartEl = h('div', { class: 'chart', 'data-chart': 'throughput' });
		this.legendEl = h('div');
		this.cursorEl = h('p', { class: 'chart-note', 'data-testid': 'cursor-config' });
		this.el = card('Throughput and the configs tried', this.statsEl, this.chartEl, this.legendEl, this.cursorEl);
		this.chart = null;
		this.model = null;
		this.lanes = -1;     /* lanes the chart was built for: its top padding depends on them */
		this.range = [0, 1];
	}

	/* latest: Map of the job's latest values; trials normalised; tp: the samples_per_s series. */
	update(latest, trials, range, running, tp) {
		this.range = range;
		this.model = timelineModel(trials, range[1], running);
		replace(this.statsEl, stats(latest));
		if (!this.chart || this.lanes !== this.model.lanes.length) {
			this.destroy();
			this.lanes = this.model.lanes.length;
			this.chart = new Chart(this.chartEl, {
				title: 'Throughput (samples/s)',
				name: 'throughput',
				height: 260,
				yMin: 0,
				padding: [timelinePadding(this.model), 12, 0, 0],
				yAxisMin: this.lanes ? 72 : 0,
				series: [{ label: 'samples/s' }],
				xRange: () => this.range,
				plugins: [timelinePlugin(() => this.model), { hooks: { setCursor: [(u) => this.cursorText(u)] } }],
				emptyText: 'No throughput yet: the job has reported no samples_per_s.',
			});
		}
		this.chart.set(joinSeries([tp]));
		replace(this.legendEl, legend(this.model));
	}

	cursorText(u) {
		const t = u.cursor.idx != null ? u.data[0][u.cursor.idx] : null;
		const parts = t == null || !this.model ? [] : this.model.lanes.map((l) => {
			const s = l.segments.find((x) => x.start <= t && t <= x.end);
			return s ? `${l.name || 'job'}: ${fmt.config(s.trial.config)}` : null;
		}).filter(Boolean);
		this.cursorEl.textContent = parts.length ? `At ${fmt.time(t)} (${fmt.utc(t)}): ${parts.join('; ')}` : '';
	}

	retheme() {
		if (this.chart)
			this.chart.redraw(true);
	}

	destroy() {
		if (this.chart)
			this.chart.remove();
		this.chart = null;
	}
}
