/*
 * What every chart offers besides its picture: its numbers as a table
 * (opened on demand, so a page of charts builds no table it does not
 * show) and as CSV or JSON, one click each, made in the browser from the
 * data the chart drew.  A chart hands over a source:
 *   {name (file stem), title, x: {label, time: bool, fmt?}, series: [{label, fmt?}],
 *    columns(): [xs, ys0, ys1, ...] (uPlot's columnar data, null for no value)}
 * and keeps it current; tools(source).refresh() redraws an open table.
 * Files are made from Blob URLs: nothing leaves the page.
 */
import { h, replace, when } from './dom.js';
import * as fmt from './format.js';

/* Rows shown in a table view; the downloads carry them all. */
const TABLE_ROWS = 2000;

/* Saves text as a file named name through a Blob URL. */
export function download(name, type, text) {
	const url = URL.createObjectURL(new Blob([text], { type }));
	const a = h('a', { href: url, download: name, hidden: true });
	document.body.append(a);
	a.click();
	a.remove();
	setTimeout(() => URL.revokeObjectURL(url), 60000);
}

/* A CSV field: quoted when it needs to be; text a spreadsheet would run as a formula gets a ' first. */
export function csvField(v) {
	if (v === null || v === undefined)
		return '';
	if (typeof v === 'number')
		return Number.isFinite(v) ? String(v) : '';
	let s = String(v);
	if (/^[=+\-@]/.test(s))
		s = "'" + s;
	return /[",\n\r]/.test(s) || s !== String(v) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

export function csvText(header, rows) {
	return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}

/* The file name stem of a chart: its name and the time of the download. */
function stem(src) {
	const d = new Date();
	const p = (n) => String(n).padStart(2, '0');
	return `dlprofd-${src.name}-${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}`;
}

/* The chart's data as CSV: for a time axis its unix seconds and UTC, then one column a series. */
function chartCsv(src) {
	const cols = src.columns();
	const header = src.x.time ? ['t_unix', 'time_utc'] : [src.x.label || 'x'];
	header.push(...src.series.map((s) => s.label));
	const rows = (cols[0] || []).map((x, i) => [
		...(src.x.time ? [x, new Date(x * 1000).toISOString()] : [x]),
		...cols.slice(1).map((ys) => ys[i] ?? null),
	]);
	return csvText(header, rows);
}

/* The chart's data as JSON: each series its [x, y] points, as the daemon's series answers give them. */
function chartJson(src) {
	const cols = src.columns();
	const xs = cols[0] || [];
	return JSON.stringify({
		title: src.title,
		x: src.x.time ? 'unix seconds' : src.x.label,
		series: src.series.map((s, k) => ({
			label: s.label,
			points: xs.map((x, i) => [x, cols[k + 1][i]]).filter((p) => p[1] !== null && p[1] !== undefined),
		})),
	}, null, 1) + '\n';
}

function tableOf(src) {
	const cols = src.columns();
	const xs = cols[0] || [];
	const xCell = src.x.time ? (x) => when(x) : (x) => (src.x.fmt || fmt.num)(x);
	const shown = xs.length > TABLE_ROWS ? xs.length - TABLE_ROWS : 0;
	const rows = [];
	for (let i = shown; i < xs.length; i++)
		rows.push(h('tr', {}, h('th', { scope: 'row' }, xCell(xs[i])),
			cols.slice(1).map((ys, k) => h('td', { class: 'num' },
				ys[i] === null || ys[i] === undefined ? '–' : src.series[k].fmt ? src.series[k].fmt(ys[i], 0) : fmt.num(ys[i])))));
	return [
		shown ? h('p', { class: 'chart-note' }, `The latest ${TABLE_ROWS} of ${xs.length} rows; the downloads have them all.`) : null,
		h('div', { class: 'table-wrap data-table', tabindex: 0, role: 'region', 'aria-label': `${src.title}: the numbers` },
			h('table', {}, h('caption', { class: 'sr-only' }, src.title),
				h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, src.x.time ? 'time' : src.x.label || 'x'),
					src.series.map((s) => h('th', { scope: 'col', class: 'num' }, s.label)))),
				h('tbody', {}, rows))),
	];
}

/*
 * The tools row of a chart: a table view of its numbers (a <details>
 * filled when opened, and when the data changes while open) and CSV and
 * JSON downloads.  custom: {table?(), csv?(), json?()} replace the
 * columnar defaults (the heatmap's matrix).
 */
export function tools(src, custom = {}) {
	const body = h('div');
	const details = h('details', { class: 'chart-data' }, h('summary', {}, 'Table'), body);
	const fill = () => {
		if (details.open)
			replace(body, ...(custom.table ? custom.table() : tableOf(src)));
	};
	details.addEventListener('toggle', fill);
	const csv = h('button', { type: 'button', 'data-testid': 'export-csv', title: 'Download the numbers as CSV' }, 'CSV');
	const json = h('button', { type: 'button', 'data-testid': 'export-json', title: 'Download the numbers as JSON' }, 'JSON');
	csv.addEventListener('click', () => download(stem(src) + '.csv', 'text/csv', custom.csv ? custom.csv() : chartCsv(src)));
	json.addEventListener('click', () => download(stem(src) + '.json', 'application/json',
		custom.json ? custom.json() : chartJson(src)));
	const el = h('div', { class: 'chart-tools', 'data-testid': 'chart-tools' }, details,
		h('span', { class: 'downloads' }, csv, json));
	return { el, refresh: fill };
}
