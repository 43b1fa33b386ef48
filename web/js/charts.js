/*
 * Charts on top of the vendored uPlot (global `uPlot`, loaded before the
 * modules): time-series charts that follow the page theme and the width of
 * their card, a config timeline drawn over a throughput chart, and the
 * learned-surface chart of a workload with error bars and best/default
 * marks.  Labels drawn on canvases are text, never markup.  Every chart's
 * numbers are reachable without a mouse: it takes focus, the arrow keys
 * walk its points (read out through a live region), and its tools row
 * (datatools.js) opens them as a table or downloads them.  Times are the
 * browser's; a time's UTC shows on hover.
 */
import { h, replace } from './dom.js';
import { tools } from './datatools.js';
import * as fmt from './format.js';

export function theme() {
	const cs = getComputedStyle(document.documentElement);
	const v = (n) => cs.getPropertyValue(n).trim();
	return {
		fg: v('--fg'), muted: v('--muted'), grid: v('--grid'), card: v('--card'), bg: v('--bg'),
		palette: [0, 1, 2, 3, 4, 5, 6, 7].map((i) => v('--c' + i)),
	};
}

/* A value as a series' formatter writes it ((value, tick increment) -> text; 0: no tick), or as a number. */
export function valueText(f, v) {
	return f ? f(v, 0) : fmt.num(v);
}

/* The colour with alpha, for bands: works for #rrggbb. */
export function alpha(color, a) {
	const m = /^#([0-9a-f]{6})$/i.exec(color);
	if (!m)
		return color;
	const n = parseInt(m[1], 16);
	return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
}

/* Time ticks in 24-hour local time, with seconds or the date when the span needs them. */
function timeTicks(u, splits, ai, space, incr) {
	const span = u.scales.x.max - u.scales.x.min;
	const p = (n) => String(n).padStart(2, '0');
	return splits.map((t) => {
		const d = new Date(t * 1000);
		const hm = `${p(d.getHours())}:${p(d.getMinutes())}`;
		if (span > 2 * 86400)
			return `${p(d.getMonth() + 1)}-${p(d.getDate())} ${hm}`;
		return incr % 60 ? `${hm}:${p(d.getSeconds())}` : hm;
	});
}

/*
 * Room per time tick: labels with seconds need more, and uPlot picks
 * sub-minute ticks only when a minute spans this much room anyway.
 */
function timeSpace(u, ai, min, max, dim) {
	return max > min && (dim / (max - min)) * 60 >= 72 ? 72 : 50;
}

/* The y axis as wide as its longest tick label (uPlot's own recipe). */
function axisSize(u, values, ai, cycle) {
	const axis = u.axes[ai];
	if (cycle > 1)
		return axis._size;
	let size = axis.ticks.size + axis.gap;
	const longest = (values || []).reduce((a, v) => (String(v).length > a.length ? String(v) : a), '');
	if (longest) {
		u.ctx.font = axis.font[0];
		size += u.ctx.measureText(longest).width / uPlot.pxRatio;
	}
	return Math.ceil(size) + 4;
}

function axes(th, spec, yFmt) {
	const common = { stroke: th.muted, grid: { stroke: th.grid, width: 1 }, ticks: { stroke: th.grid, width: 1 } };
	const labels = spec.labels || {};
	return [
		spec.xTime !== false ? { ...common, space: timeSpace, values: timeTicks }
			: { ...common, label: labels.x, labelSize: 20, splits: spec.xSplits,
				values: (u, vals, ai, space, incr) => vals.map((x) => (spec.xFmt || fmt.num)(x, incr)) },
		{ ...common, size: (u, v, ai, cycle) => Math.max(spec.yAxisMin || 0, axisSize(u, v, ai, cycle)),
			values: (u, vals, ai, space, incr) => vals.map((x) => yFmt(x, incr)),
			label: labels.y, labelSize: labels.y ? 20 : 0 },
	];
}

/*
 * A chart in el that sizes itself to el's width.  spec: {title, name (file
 * stem of its downloads), series: [{label, fmt?}], height?, plugins?, xTime
 * (default true), xFmt?, yFmt?, yMin?, labels?, tools (default true)}.
 * set(data) takes uPlot's columnar data; an all-empty set shows
 * `emptyText`.  The tools row and the live region go right after el.
 */
export class Chart {
	constructor(el, spec) {
		this.el = el;
		this.spec = spec;
		this.u = null;
		this.ro = null;
		this.data = null;
		this.kidx = null;      /* the point the keys are on */
		this.said = h('p', { class: 'sr-only', 'aria-live': 'polite', 'data-testid': 'chart-said' });
		this.tools = spec.tools === false ? null : tools(this.source());
		this.onKey = (e) => this.key(e);
	}

	/* What the tools row reads: the data as drawn. */
	source() {
		const s = this.spec;
		return {
			name: s.name || 'chart',
			title: s.title || 'chart',
			x: { time: s.xTime !== false, label: (s.labels && s.labels.x) || (s.xTime === false ? 'x' : 'time'), fmt: s.xFmt },
			series: s.series.map((x) => ({ label: x.label, fmt: x.fmt || s.yFmt })),
			columns: () => this.data || [[]],
		};
	}

	/* The tools row and the live region sit after the chart, once it is in the page. */
	attach() {
		if (this.attached || !this.el.parentNode)
			return;
		this.attached = true;
		this.el.after(...[this.tools && this.tools.el, this.said].filter(Boolean));
	}

	/* A point as words: "14:03:05: samples/s 185; step time 0.35 s". */
	describe(i) {
		const s = this.spec, d = this.data;
		const x = d[0][i];
		const xText = s.xTime === false ? `${(s.labels && s.labels.x) || 'x'} ${(s.xFmt || fmt.num)(x)}`
			: `${fmt.time(x)} (${fmt.utc(x)})`;
		const ys = s.series.map((ser, k) => `${ser.label} ${d[k + 1][i] == null ? 'no value' : valueText(ser.fmt || s.yFmt, d[k + 1][i])}`);
		return `${xText}: ${ys.join('; ')}`;
	}

	/* Arrow keys walk the points (Shift: ten at a time), Home and End jump; Escape lets go. */
	key(e) {
		const u = this.u, n = this.data ? this.data[0].length : 0;
		if (!u || !n)
			return;
		let i = this.kidx ?? (u.cursor.idx ?? n - 1);
		const step = e.shiftKey ? 10 : 1;
		if (e.key === 'ArrowLeft' || e.key === 'ArrowDown')
			i -= step;
		else if (e.key === 'ArrowRight' || e.key === 'ArrowUp')
			i += step;
		else if (e.key === 'Home')
			i = 0;
		else if (e.key === 'End')
			i = n - 1;
		else if (e.key === 'Escape') {
			this.kidx = null;
			u.setCursor({ left: -10, top: -10 });
			return;
		} else
			return;
		e.preventDefault();
		this.kidx = Math.max(0, Math.min(n - 1, i));
		u.setCursor({ left: u.valToPos(this.data[0][this.kidx], 'x'), top: u.bbox.height / uPlot.pxRatio / 2 });
		this.said.textContent = this.describe(this.kidx);
	}

	/* The chart takes focus and names itself; hovering a time gives its UTC. */
	keyboard() {
		const el = this.el;
		el.tabIndex = 0;
		el.setAttribute('role', 'group');
		el.setAttribute('aria-label', `${this.spec.title || 'chart'}: arrow keys read the points; the table below lists them`);
		el.addEventListener('keydown', this.onKey);
	}

	options(width) {
		const th = theme();
		const s = this.spec;
		const yFmt = s.yFmt || ((v, incr) => (incr ? fmt.tick(v, incr) : fmt.num(v)));
		return {
			width,
			height: s.height || 220,
			padding: s.padding || [12, 12, 0, 0],
			scales: {
				x: { time: s.xTime !== false, range: (u, mn, mx) => xRange(s, mn, mx), ...(s.xLog ? { distr: 3, log: 2 } : {}) },
				y: { range: (u, mn, mx) => yRange(mn, s.yHi ? Math.max(mx ?? -Infinity, s.yHi()) : mx, s.yMin) },
			},
			axes: axes(th, s, yFmt),
			legend: { show: s.legend !== false, live: true },
			cursor: { drag: { x: false, y: false }, points: { size: 6 } },
			hooks: { setCursor: [(u) => this.hoverTitle(u)] },
			series: [
				s.xTime === false ? { label: (s.labels && s.labels.x) || 'x', value: (u, v) => (v == null ? '–' : (s.xFmt || fmt.num)(v)) }
					: { label: 'time', value: (u, v) => (v == null ? '–' : fmt.time(v)) },
				...s.series.map((ser, i) => ({
					label: ser.label,
					stroke: ser.muted ? th.muted : th.palette[(ser.colorIndex ?? i) % th.palette.length],
					width: 1.5,
					spanGaps: true,
					points: ser.points || { show: (u, si, i0, i1) => i1 - i0 < 60, size: 4 },
					value: (u, v) => (v == null ? '–' : (ser.fmt || yFmt)(v, 0)),
					...(ser.extra || {}),
				})),
			],
			plugins: s.plugins || [],
		};
	}

	/* The UTC of the time under the cursor, as the chart's tooltip. */
	hoverTitle(u) {
		const i = u.cursor.idx;
		if (this.spec.xTime !== false)
			this.el.title = i == null || !this.data ? '' : fmt.utc(this.data[0][i]);
	}

	set(data) {
		this.data = data;
		this.attach();
		if (this.tools)
			this.tools.refresh();
		const has = data.length > 1 && data[0].length > 0 && data.slice(1).some((ys) => ys.some((y) => y != null));
		if (this.tools)
			this.tools.el.hidden = !has;
		if (!has) {
			this.destroy();
			replace(this.el, h('p', { class: 'chart-note', 'data-testid': 'no-data' }, this.spec.emptyText || 'No samples yet.'));
			this.el.dataset.points = '0';
			return;
		}
		this.el.dataset.points = String(data.slice(1).reduce((n, ys) => n + ys.filter((y) => y != null).length, 0));
		this.el.dataset.lastT = String(data[0][data[0].length - 1]);
		if (this.kidx !== null && this.kidx >= data[0].length)
			this.kidx = null;
		if (this.u) {
			this.u.setData(data, true);
			return;
		}
		replace(this.el);
		this.u = new uPlot(this.options(Math.max(200, this.el.clientWidth)), data, this.el);
		this.keyboard();
		this.ro = new ResizeObserver(() => {
			const w = Math.max(200, this.el.clientWidth);
			if (this.u && Math.abs(w - this.u.width) > 1)
				this.u.setSize({ width: w, height: this.u.height });
		});
		this.ro.observe(this.el);
	}

	/* Redraws without new data (the theme changed, or a plugin's state did). */
	redraw(rebuild) {
		if (rebuild && this.u && this.data) {
			const d = this.data;
			this.destroy();
			this.set(d);
		} else if (this.u) {
			this.u.redraw(false, false);
		}
	}

	destroy() {
		if (this.ro)
			this.ro.disconnect();
		if (this.u)
			this.u.destroy();
		this.el.removeEventListener('keydown', this.onKey);
		this.el.removeAttribute('tabindex');
		this.el.removeAttribute('role');
		this.el.removeAttribute('aria-label');
		this.ro = null;
		this.u = null;
	}

	/* The chart is gone for good: its tools row and live region go too. */
	remove() {
		this.destroy();
		if (this.tools)
			this.tools.el.remove();
		this.said.remove();
		this.attached = false;
	}
}

function xRange(spec, mn, mx) {
	if (spec.xRange)
		return spec.xRange();
	if (mn == null || mx == null)
		return [0, 1];
	if (spec.xLog)
		return [mn / 1.25, mx * 1.25];
	const pad = mn === mx ? 1 : (mx - mn) * 0.04;
	return [mn - pad, mx + pad];
}

function yRange(mn, mx, yMin) {
	if (!Number.isFinite(mn) || !Number.isFinite(mx))
		return [0, 1];
	let lo = yMin !== undefined ? Math.min(yMin, mn) : mn;
	let hi = mx;
	if (hi === lo) {
		hi = hi === 0 ? 1 : hi + Math.abs(hi) * 0.1;
		lo = yMin !== undefined ? lo : lo - Math.abs(lo) * 0.1;
	}
	return [lo, hi + (hi - lo) * 0.08];
}

/* Columns for uPlot from several {xs, ys} series with their own times. */
export function joinSeries(list) {
	const tables = list.map((s) => [s.xs, s.ys]);
	if (!tables.length)
		return [[]];
	if (tables.length === 1)
		return [tables[0][0], tables[0][1]];
	return uPlot.join(tables);
}

/* Trials as lanes, one per phase ('' = the whole job first), with a colour per config. */
export function timelineModel(trials, now, running) {
	const lanes = new Map();
	for (const t of trials) {
		if (!Number.isFinite(t.start))
			continue;
		if (!lanes.has(t.phase))
			lanes.set(t.phase, []);
		lanes.get(t.phase).push(t);
	}
	const names = [...lanes.keys()].sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)));
	/* Label a segment by the knobs that vary anywhere; colour equal labels alike. */
	const all = trials.map((t) => t.config);
	const keys = new Set();
	for (const c of all)
		for (const [k, v] of fmt.knobs(c))
			if (all.some((o) => JSON.stringify(o[k]) !== JSON.stringify(v)))
				keys.add(k);
	const varying = keys.size ? [...keys] : null;
	const colors = new Map();
	const out = names.map((name) => ({ name, segments: segments(lanes.get(name), varying, colors, now, running) }));
	return { lanes: out, colors, varying };
}

/*
 * A lane's spans: a config holds until the next trial starts (the gaps
 * between a trial's last sample and the next one's first are the same
 * config still running), and neighbours with the same label are one span.
 */
function segments(trials, varying, colors, now, running) {
	const out = [];
	trials.sort((a, b) => a.start - b.start);
	for (const [i, t] of trials.entries()) {
		const label = fmt.config(t.config, varying || undefined);
		if (!colors.has(label))
			colors.set(label, colors.size);
		const next = trials[i + 1];
		/* The last config of a running job is still in effect. */
		const end = next ? Math.max(next.start, t.start) : running ? Math.max(now, t.start) : (t.end ?? now);
		const last = out[out.length - 1];
		if (last && last.label === label) {
			last.end = end;
			last.trials.push(t);
		} else {
			out.push({ start: t.start, end, label, color: colors.get(label), trial: t, trials: [t] });
		}
	}
	return out;
}

const LANE_H = 16;
const LANE_GAP = 9;   /* between the strips and the plot: room for the top tick label */

/*
 * A uPlot plugin that draws the config timeline: one strip per phase above
 * the plot, coloured per config with its label where it fits, the first
 * lane's spans as faint bands behind the series and a line at each switch.
 */
export function timelinePlugin(getModel) {
	function drawLane(u, th, lane, y, dpr) {
		const { left, width } = u.bbox;
		const ctx = u.ctx;
		ctx.font = `${11 * dpr}px system-ui, sans-serif`;
		ctx.textBaseline = 'middle';
		ctx.textAlign = 'left';
		for (const s of lane.segments) {
			const x0 = Math.max(left, u.valToPos(s.start, 'x', true));
			const x1 = Math.min(left + width, u.valToPos(s.end, 'x', true));
			if (x1 <= x0)
				continue;
			const col = th.palette[s.color % th.palette.length];
			ctx.fillStyle = alpha(col, 0.85);
			ctx.fillRect(x0, y, Math.max(1, x1 - x0 - dpr), (LANE_H - 3) * dpr);
			const w = ctx.measureText(s.label).width;
			if (x1 - x0 > w + 6 * dpr) {
				ctx.fillStyle = th.card;
				ctx.fillText(s.label, x0 + 3 * dpr, y + (LANE_H - 3) * dpr / 2);
			}
		}
		ctx.fillStyle = th.muted;
		ctx.textAlign = 'right';
		const name = lane.name === '' ? 'job' : lane.name;
		let text = name;
		while (text.length > 1 && ctx.measureText(text).width > left - 8 * dpr)
			text = text.slice(0, -2) + '…';
		ctx.fillText(text, left - 4 * dpr, y + (LANE_H - 3) * dpr / 2);
		ctx.textAlign = 'left';
	}
	function bands(u, th, lane) {
		const { left, top, width, height } = u.bbox;
		const ctx = u.ctx;
		for (const [i, s] of lane.segments.entries()) {
			const x0 = Math.max(left, u.valToPos(s.start, 'x', true));
			const x1 = Math.min(left + width, u.valToPos(s.end, 'x', true));
			if (x1 <= x0)
				continue;
			ctx.fillStyle = alpha(th.palette[s.color % th.palette.length], 0.1);
			ctx.fillRect(x0, top, x1 - x0, height);
			if (i > 0 && s.label !== lane.segments[i - 1].label) {
				ctx.fillStyle = alpha(th.palette[s.color % th.palette.length], 0.7);
				ctx.fillRect(x0, top, Math.max(1, uPlot.pxRatio), height);
			}
		}
	}
	return {
		hooks: {
			drawClear: [(u) => {
				const m = getModel();
				if (m && m.lanes.length)
					bands(u, theme(), m.lanes[0]);
			}],
			draw: [(u) => {
				const m = getModel();
				if (!m)
					return;
				const th = theme();
				const dpr = uPlot.pxRatio;
				u.ctx.save();
				m.lanes.forEach((lane, i) => drawLane(u, th, lane, u.bbox.top - (m.lanes.length - i) * LANE_H * dpr - LANE_GAP * dpr, dpr));
				u.ctx.restore();
			}],
		},
	};
}

export function timelinePadding(model) {
	return model && model.lanes.length ? model.lanes.length * LANE_H + LANE_GAP + 2 : 12;
}

/*
 * The learned surface: x = one knob, y = objective; each series one value
 * of the other knobs.  Error bars (std) and marks for the best and the
 * default are drawn by a plugin from marks: {bars: [[x, lo, hi, si]],
 * best: [x, y] | null, dflt: [x, y] | null}.
 */
export function surfacePlugin(getMarks) {
	return {
		hooks: {
			draw: [(u) => {
				const m = getMarks();
				if (!m)
					return;
				const th = theme();
				const ctx = u.ctx;
				const dpr = uPlot.pxRatio;
				ctx.save();
				ctx.lineWidth = dpr;
				ctx.setLineDash([]);
				for (const [x, lo, hi, si] of m.bars) {
					if (!u.series[si] || !u.series[si].show)
						continue;
					const px = u.valToPos(x, 'x', true);
					const y0 = u.valToPos(lo, 'y', true), y1 = u.valToPos(hi, 'y', true);
					const st = u.series[si].stroke;
					ctx.strokeStyle = typeof st === 'function' ? st(u, si) : st;
					ctx.beginPath();
					ctx.moveTo(px, y0); ctx.lineTo(px, y1);
					ctx.moveTo(px - 3 * dpr, y0); ctx.lineTo(px + 3 * dpr, y0);
					ctx.moveTo(px - 3 * dpr, y1); ctx.lineTo(px + 3 * dpr, y1);
					ctx.stroke();
				}
				ctx.lineWidth = 2 * dpr;
				ctx.textAlign = 'left';
				ctx.strokeStyle = th.fg;
				ctx.fillStyle = th.fg;
				ctx.font = `${11 * dpr}px system-ui, sans-serif`;
				if (m.dflt) {
					const px = u.valToPos(m.dflt[0], 'x', true), py = u.valToPos(m.dflt[1], 'y', true);
					const r = 7 * dpr;
					ctx.beginPath();
					ctx.moveTo(px, py - r); ctx.lineTo(px + r, py); ctx.lineTo(px, py + r); ctx.lineTo(px - r, py);
					ctx.closePath();
					ctx.stroke();
					ctx.fillText('default', px + r + 2 * dpr, py + r + 8 * dpr);
				}
				if (m.best) {
					const px = u.valToPos(m.best[0], 'x', true), py = u.valToPos(m.best[1], 'y', true);
					ctx.beginPath();
					ctx.arc(px, py, 8 * dpr, 0, 2 * Math.PI);
					ctx.stroke();
					ctx.fillText('best', px + 10 * dpr, py - 8 * dpr);
				}
				ctx.restore();
			}],
		},
	};
}
