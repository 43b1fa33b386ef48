/*
 * What every thread of a job does, over time: threads down, time across,
 * each cell's colour the thread's CPU in cores over the interval that ends
 * at its column (GET /api/v1/jobs/{id}/threads: one answer, the stored
 * per-thread series in columns).  Drawn on one canvas as an image of one
 * pixel per screen column and thread, scaled to the rows: 256 threads over
 * an hour cost one putImageData and no element per point.  A strip above
 * gives the phase that took most of each column's time.  Pointing at a cell,
 * or walking the cells with the arrow keys once the canvas has focus, names
 * it: the thread and its process, its CPU, the interval in local time and
 * UTC, and each phase's share.  The tools row lists each thread's mean and
 * peak as a table and downloads every cell as CSV or JSON.
 */
import { api, query } from './api.js';
import { h, replace, card } from './dom.js';
import { theme } from './charts.js';
import { tools, csvText } from './datatools.js';
import * as fmt from './format.js';

const MAX_ROWS_PX = 560;         /* the rows' height at most, whatever the threads */
const STRIP_H = 8;               /* the phase strip */
const AXIS_H = 20;               /* the time axis under the rows */
const BUSY = 0.25;               /* a thread counts busy from a quarter core, as cpu.busy_threads does */
const TICKS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

/* Colour stops from idle to a whole core, from the theme (--heat0..4). */
function ramp() {
	const cs = getComputedStyle(document.documentElement);
	const stops = [0, 1, 2, 3, 4].map((i) => cs.getPropertyValue('--heat' + i).trim())
		.map((c) => { const n = parseInt(c.replace('#', ''), 16); return [n >> 16, (n >> 8) & 255, n & 255]; });
	const lut = new Uint8ClampedArray(256 * 4);
	for (let i = 0; i < 256; i++) {
		const x = (i / 255) * (stops.length - 1), k = Math.min(stops.length - 2, Math.floor(x)), f = x - k;
		for (let c = 0; c < 3; c++)
			lut[i * 4 + c] = stops[k][c] + (stops[k + 1][c] - stops[k][c]) * f;
		lut[i * 4 + 3] = 255;
	}
	return { lut, stops };
}

/* Where each column starts: after the one before, and no longer than the usual spacing (a gap stays empty). */
function columnStarts(t) {
	const gaps = t.slice(1).map((x, i) => x - t[i]).sort((a, b) => a - b);
	const usual = gaps.length ? gaps[Math.floor(gaps.length / 2)] : 10;
	return t.map((x, i) => Math.max(i ? t[i - 1] : -Infinity, x - usual * 1.5));
}

/* A tick spacing giving labels at least px apart over span seconds on width pixels. */
function tickStep(span, width, px) {
	return TICKS.find((s) => (s / span) * width >= px) || TICKS[TICKS.length - 1];
}

export class ThreadsCard {
	constructor(jobId) {
		this.id = jobId;
		this.data = null;
		this.order = 'process';
		this.cur = null;             /* the cell the keys are on: {r, c} */
		this.canvas = h('canvas', { class: 'heatmap-canvas', tabindex: 0, role: 'img', 'data-chart': 'threads' });
		this.tip = h('div', { class: 'heat-tip', hidden: true });
		this.said = h('p', { class: 'sr-only', 'aria-live': 'polite', 'data-testid': 'chart-said' });
		this.wrap = h('div', { class: 'heatmap' }, this.canvas, this.tip);
		this.note = h('p', { class: 'chart-note' });
		this.legend = h('div', { class: 'heat-legend' });
		this.sortBtn = h('button', { type: 'button', 'aria-pressed': 'false', title: 'Order the rows by CPU used' }, 'Busiest first');
		this.sortBtn.addEventListener('click', () => {
			this.order = this.order === 'process' ? 'busy' : 'process';
			this.sortBtn.setAttribute('aria-pressed', String(this.order === 'busy'));
			this.draw();
		});
		this.tools = tools(this.source(), {
			table: () => this.table(),
			csv: () => this.csv(),
			json: () => JSON.stringify(this.data, null, 1) + '\n',
		});
		this.el = card('What every thread does', h('div', { class: 'heat-head' }, this.legend, this.sortBtn),
			this.wrap, this.tools.el, this.said, this.note);
		this.el.dataset.testid = 'threads';
		this.canvas.addEventListener('mousemove', (e) => this.hover(e));
		this.canvas.addEventListener('mouseleave', () => { this.tip.hidden = true; });
		this.canvas.addEventListener('keydown', (e) => this.key(e));
		this.ro = new ResizeObserver(() => this.draw());
		this.ro.observe(this.wrap);
	}

	source() {
		return { name: 'threads', title: 'CPU of each thread (cores)', x: { time: true }, series: [], columns: () => [[]] };
	}

	/* Reads the threads over range [from, to] (unix seconds); note says why there are none. */
	async update(range, signal, why) {
		const [from, to] = range;
		const width = Math.max(200, this.wrap.clientWidth || 800);
		const step = Math.max(1, Math.floor((to - from) / width));
		const body = await api(`jobs/${encodeURIComponent(this.id)}/threads?${query([['from', Math.floor(from)],
			['to', Math.ceil(to)], ['step', step]])}`, signal);
		this.data = body;
		this.el.hidden = !body.threads.length && !why;
		const n = body.threads.length, cols = body.t.length;
		/* The cell the keys were on may be gone (a thread ended, the range moved). */
		if (this.cur && (this.cur.r >= n || this.cur.c >= cols))
			this.cur = null;
		this.canvas.dataset.threads = String(n);
		this.canvas.dataset.columns = String(cols);
		this.canvas.setAttribute('aria-label', n ? `Heatmap of ${n} threads over ${cols} intervals: arrow keys read each cell` : 'No threads');
		this.note.textContent = !n ? `No per-thread figures for this job${why ? ': ' + why : ''}.`
			: `${n} threads, one column per ${fmt.duration(body.t.length > 1 ? (body.t[body.t.length - 1] - body.t[0]) / (body.t.length - 1) : body.step)}`
			+ ' (the sampler reads each thread once a store interval); colour: cores used over the interval that ends at the column.';
		this.tools.el.hidden = !n;
		this.wrap.hidden = !n;
		this.legendDraw();
		this.tools.refresh();
		this.draw();
	}

	legendDraw() {
		const { stops } = ramp();
		const grad = `linear-gradient(to right, ${stops.map((c) => `rgb(${c.join(',')})`).join(', ')})`;
		const phases = this.data ? this.data.phases.map((p) => p.name) : [];
		const th = theme();
		replace(this.legend,
			h('span', { class: 'muted' }, '0'), h('span', { class: 'heat-ramp', style: `background:${grad}` }), h('span', { class: 'muted' }, '1 core'),
			phases.length ? h('span', { class: 'muted' }, ' · phase:') : null,
			phases.map((p, i) => h('span', { class: 'heat-phase' },
				h('span', { class: 'swatch', style: `background:${th.palette[i % th.palette.length]}` }), p)));
	}

	/* The rows in the order chosen: index into data.threads. */
	rows() {
		const th = this.data ? this.data.threads : [];
		const idx = th.map((_, i) => i);
		if (this.order === 'busy')
			idx.sort((a, b) => (th[b].mean ?? -1) - (th[a].mean ?? -1));
		return idx;
	}

	geometry() {
		const n = this.data.threads.length;
		const narrow = this.wrap.clientWidth < 520;
		const rowH = Math.max(2, Math.min(16, Math.floor(MAX_ROWS_PX / Math.max(1, n))));
		const labelW = rowH >= 10 ? (narrow ? 72 : 170) : (narrow ? 8 : 60);
		const width = Math.max(200, this.wrap.clientWidth);
		return { n, rowH, labelW, width, plotX: labelW, plotY: STRIP_H + 4, plotW: width - labelW - 4, plotH: n * rowH,
			height: STRIP_H + 4 + n * rowH + AXIS_H };
	}

	/* The column a time falls in (its interval ends at the column), or -1. */
	columnAt(x, g) {
		const d = this.data;
		const t = d.from + ((x - g.plotX) / g.plotW) * (d.to - d.from);
		let lo = 0, hi = d.t.length - 1;
		if (hi < 0 || t > d.t[hi])
			return -1;
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if (d.t[mid] < t)
				lo = mid + 1;
			else
				hi = mid;
		}
		return t > this.starts[lo] ? lo : -1;
	}

	draw() {
		if (!this.data || !this.data.threads.length || !this.wrap.clientWidth)
			return;
		const t0 = performance.now();
		const d = this.data, g = this.geometry(), dpr = window.devicePixelRatio || 1, th = theme();
		this.g = g;
		this.starts = columnStarts(d.t);
		const c = this.canvas;
		c.style.width = g.width + 'px';
		c.style.height = g.height + 'px';
		c.width = Math.round(g.width * dpr);
		c.height = Math.round(g.height * dpr);
		const ctx = c.getContext('2d');
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, g.width, g.height);
		const pw = Math.max(1, Math.round(g.plotW * dpr));
		/* Each screen pixel column's data column, once for all rows. */
		const colOf = new Int32Array(pw);
		for (let x = 0; x < pw; x++)
			colOf[x] = this.columnAt(g.plotX + (x + 0.5) / dpr, g);
		const rows = this.rows(), { lut } = ramp();
		const img = new ImageData(pw, g.n);
		const px = img.data;
		rows.forEach((ti, r) => {
			const v = d.threads[ti].values;
			for (let x = 0; x < pw; x++) {
				const k = colOf[x];
				if (k < 0 || v[k] === null)
					continue;
				const li = Math.max(0, Math.min(255, Math.round(v[k] * 255))) * 4, o = (r * pw + x) * 4;
				px[o] = lut[li];
				px[o + 1] = lut[li + 1];
				px[o + 2] = lut[li + 2];
				px[o + 3] = 255;
			}
		});
		const off = document.createElement('canvas');
		off.width = pw;
		off.height = g.n;
		off.getContext('2d').putImageData(img, 0, 0);
		ctx.imageSmoothingEnabled = false;
		ctx.drawImage(off, 0, 0, pw, g.n, g.plotX, g.plotY, g.plotW, g.plotH);
		this.drawPhases(ctx, g, colOf, dpr, th);
		this.drawLabels(ctx, g, rows, th);
		this.drawAxis(ctx, g, th);
		this.drawCursor(ctx, g);
		/* What a draw costs, for the tests and bench/web to read. */
		c.dataset.drawMs = (performance.now() - t0).toFixed(1);
	}

	/* The phase that took most of each column's time, as a strip above the rows. */
	drawPhases(ctx, g, colOf, dpr, th) {
		const ph = this.data.phases;
		if (!ph.length)
			return;
		for (let x = 0; x < colOf.length; x++) {
			const k = colOf[x];
			if (k < 0)
				continue;
			let best = -1, most = 0;
			ph.forEach((p, i) => { if (p.time_s[k] > most) { most = p.time_s[k]; best = i; } });
			if (best < 0)
				continue;
			ctx.fillStyle = th.palette[best % th.palette.length];
			ctx.fillRect(g.plotX + x / dpr, 0, 1 / dpr + 0.01, STRIP_H);
		}
	}

	drawLabels(ctx, g, rows, th) {
		if (g.rowH < 10 || g.labelW < 20) {
			if (g.labelW >= 40) {
				ctx.fillStyle = th.muted;
				ctx.font = '11px system-ui, sans-serif';
				ctx.textBaseline = 'top';
				ctx.fillText(`${g.n} threads`, 2, g.plotY);
			}
			return;
		}
		ctx.font = `${Math.min(12, g.rowH - 2)}px system-ui, sans-serif`;
		ctx.textBaseline = 'middle';
		ctx.fillStyle = th.fg;
		rows.forEach((ti, r) => {
			const t = this.data.threads[ti];
			let text = t.name ? `${t.name} ${t.tid}` : `tid ${t.tid}`;
			while (text.length > 1 && ctx.measureText(text).width > g.labelW - 6)
				text = text.slice(0, -2) + '…';
			ctx.fillText(text, 2, g.plotY + r * g.rowH + g.rowH / 2);
		});
	}

	drawAxis(ctx, g, th) {
		const d = this.data, span = d.to - d.from;
		const step = tickStep(span, g.plotW, 90);
		const p = (n) => String(n).padStart(2, '0');
		ctx.fillStyle = th.muted;
		ctx.strokeStyle = th.grid;
		ctx.font = '11px system-ui, sans-serif';
		ctx.textBaseline = 'top';
		ctx.textAlign = 'center';
		const off = new Date(d.from * 1000).getTimezoneOffset() * 60;
		for (let t = Math.ceil((d.from - off) / step) * step + off; t <= d.to; t += step) {
			const x = g.plotX + ((t - d.from) / span) * g.plotW;
			const dt = new Date(t * 1000);
			const text = step < 60 ? `${p(dt.getHours())}:${p(dt.getMinutes())}:${p(dt.getSeconds())}` : `${p(dt.getHours())}:${p(dt.getMinutes())}`;
			const half = ctx.measureText(text).width / 2;
			ctx.fillRect(x, g.plotY + g.plotH, 1, 4);
			/* A label that would run off the canvas is left out; its tick stays. */
			if (x - half >= 0 && x + half <= g.width)
				ctx.fillText(text, x, g.plotY + g.plotH + 5);
		}
		ctx.textAlign = 'left';
	}

	drawCursor(ctx, g) {
		if (!this.cur)
			return;
		const d = this.data, k = this.cur.c;
		const x0 = g.plotX + ((Math.max(this.starts[k], d.from) - d.from) / (d.to - d.from)) * g.plotW;
		const x1 = g.plotX + ((d.t[k] - d.from) / (d.to - d.from)) * g.plotW;
		ctx.strokeStyle = theme().fg;
		ctx.lineWidth = 1.5;
		ctx.strokeRect(x0 - 1, g.plotY + this.cur.r * g.rowH - 1, Math.max(2, x1 - x0) + 2, g.rowH + 2);
	}

	/* A cell in words: thread, process, CPU, interval (local and UTC), phases. */
	describe(r, k) {
		const d = this.data, t = d.threads[this.rows()[r]], v = t.values[k];
		const from = Math.max(this.starts[k], d.from), to = d.t[k];
		const total = d.phases.reduce((s, p) => s + (p.time_s[k] || 0), 0);
		const phases = total > 0 ? d.phases.filter((p) => p.time_s[k] > 0)
			.map((p) => `${p.name} ${fmt.pct(p.time_s[k] / total)}`).join(', ') : '';
		return `${t.name || 'unnamed thread'} (tid ${t.tid}, pid ${t.pid}): ${v === null ? 'not read' : fmt.num(v) + ' cores'}`
			+ `, ${fmt.time(from)}–${fmt.time(to)} (${fmt.utc(to)})${phases ? '; phases: ' + phases : ''}`;
	}

	showTip(r, k, x, y) {
		this.tip.textContent = this.describe(r, k);
		this.tip.hidden = false;
		const w = this.wrap.clientWidth;
		this.tip.style.left = Math.min(Math.max(0, x + 12), Math.max(0, w - 280)) + 'px';
		this.tip.style.top = (y + 14) + 'px';
	}

	hover(e) {
		if (!this.g)
			return;
		const rect = this.canvas.getBoundingClientRect();
		const x = e.clientX - rect.left, y = e.clientY - rect.top, g = this.g;
		const r = Math.floor((y - g.plotY) / g.rowH), k = x >= g.plotX ? this.columnAt(x, g) : -1;
		if (r < 0 || r >= g.n || k < 0) {
			this.tip.hidden = true;
			return;
		}
		this.showTip(r, k, x, y);
	}

	/* Arrows move the cell (Shift: ten), Home and End the ends of the row, Page keys ten rows; Escape lets go. */
	key(e) {
		if (!this.data || !this.g)
			return;
		const n = this.g.n, m = this.data.t.length, big = e.shiftKey ? 10 : 1;
		const cur = this.cur || { r: 0, c: m - 1 };
		const moves = {
			ArrowLeft: [0, -big], ArrowRight: [0, big], ArrowUp: [-big, 0], ArrowDown: [big, 0],
			PageUp: [-10, 0], PageDown: [10, 0], Home: [0, -m], End: [0, m],
		};
		if (e.key === 'Escape') {
			this.cur = null;
			this.tip.hidden = true;
			this.draw();
			return;
		}
		if (!moves[e.key])
			return;
		e.preventDefault();
		const [dr, dc] = this.cur ? moves[e.key] : [0, 0];
		this.cur = { r: Math.max(0, Math.min(n - 1, cur.r + dr)), c: Math.max(0, Math.min(m - 1, cur.c + dc)) };
		this.draw();
		const g = this.g, d = this.data;
		this.said.textContent = this.describe(this.cur.r, this.cur.c);
		this.showTip(this.cur.r, this.cur.c, g.plotX + ((d.t[this.cur.c] - d.from) / (d.to - d.from)) * g.plotW,
			g.plotY + this.cur.r * g.rowH);
	}

	/* Each thread's figures as a table: the numbers behind its row. */
	table() {
		const d = this.data;
		return [h('div', { class: 'table-wrap data-table', tabindex: 0, role: 'region', 'aria-label': 'Each thread: CPU used' },
			h('table', {}, h('caption', { class: 'sr-only' }, 'CPU of each thread'),
				h('thead', {}, h('tr', {}, ['Thread', 'Process', 'Thread id', 'Mean (cores)', 'Peak (cores)', 'Busy'].map((l, i) =>
					h('th', { scope: 'col', class: i >= 1 ? 'num' : null }, l)))),
				h('tbody', {}, this.rows().map((i) => {
					const t = d.threads[i], seen = t.values.filter((v) => v !== null);
					return h('tr', {}, h('th', { scope: 'row' }, t.name || '–'), h('td', { class: 'num' }, String(t.pid)),
						h('td', { class: 'num' }, String(t.tid)), h('td', { class: 'num' }, fmt.num(t.mean)),
						h('td', { class: 'num' }, fmt.num(t.max)),
						h('td', { class: 'num' }, seen.length ? fmt.pct(seen.filter((v) => v >= BUSY).length / seen.length) : '–'));
				}))))];
	}

	/* Every cell, one row each: its thread and the interval's end. */
	csv() {
		const d = this.data, rows = [];
		for (const t of d.threads)
			t.values.forEach((v, k) => {
				if (v !== null)
					rows.push([t.pid, t.tid, t.name, d.t[k], new Date(d.t[k] * 1000).toISOString(), v]);
			});
		return csvText(['pid', 'tid', 'name', 't_unix', 'time_utc', 'cores'], rows);
	}

	retheme() {
		this.legendDraw();
		this.draw();
	}

	destroy() {
		this.ro.disconnect();
	}
}

