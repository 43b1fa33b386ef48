/*
 * Building the page without markup strings.  Everything the dashboard shows
 * comes from jobs (workload names, params, phases, commands) that anyone on
 * the node may choose, so text always goes in through text nodes and
 * attributes through a short allow-list; no function here parses HTML.
 */
import * as fmt from './format.js';

const ATTRS = new Set(['class', 'href', 'title', 'id', 'role', 'colspan', 'aria-label',
	'aria-current', 'type', 'readonly', 'rows', 'style', 'data-page', 'data-chart',
	'data-state', 'data-testid', 'tabindex', 'datetime', 'download', 'aria-live', 'aria-sort',
	'aria-describedby', 'aria-pressed', 'checked', 'value', 'placeholder', 'name', 'scope', 'for',
	'data-job', 'data-kind', 'hidden', 'open']);

/*
 * h('a', {href: '#/jobs', class: 'x', onclick: fn}, 'text', child, [more])
 * Strings and numbers become text nodes; null/undefined/false are skipped.
 */
export function h(tag, props, ...kids) {
	const el = document.createElement(tag);
	for (const [k, v] of Object.entries(props || {})) {
		if (v === undefined || v === null || v === false)
			continue;
		if (k.startsWith('on') && typeof v === 'function')
			el.addEventListener(k.slice(2), v);
		else if (k === 'text')
			el.textContent = String(v);
		else if (ATTRS.has(k))
			el.setAttribute(k, v === true ? '' : String(v));
		else
			throw new Error(`h: attribute ${k} not allowed`);
	}
	append(el, kids);
	return el;
}

export function append(el, kids) {
	for (const kid of kids) {
		if (kid === undefined || kid === null || kid === false)
			continue;
		if (Array.isArray(kid))
			append(el, kid);
		else if (kid instanceof Node)
			el.appendChild(kid);
		else
			el.appendChild(document.createTextNode(String(kid)));
	}
	return el;
}

/* Replaces every child of el. */
export function replace(el, ...kids) {
	el.replaceChildren();
	return append(el, kids);
}

/* A time in the browser's zone, its UTC on hover (title) and for machines (datetime). */
export function when(t) {
	if (!Number.isFinite(t) || t <= 0)
		return '–';
	return h('time', { datetime: new Date(t * 1000).toISOString(), title: fmt.utc(t) }, fmt.time(t));
}

/* A hash link to a page of the dashboard; parts are URI-encoded. */
export function link(text, ...parts) {
	return h('a', { href: '#/' + parts.map((p) => encodeURIComponent(String(p))).join('/') }, text);
}

/* The address of jobs side by side (pages/compare.js): the jobs' ids, in order. */
export function compareHref(ids) {
	return '#/compare?jobs=' + ids.map((id) => encodeURIComponent(String(id))).join(',');
}

export function card(title, ...kids) {
	return h('section', { class: 'card' }, title ? h('h2', {}, title) : null, ...kids);
}

/* A definition list of [label, value] pairs; rows whose value is empty are left out. */
export function facts(rows) {
	const dl = h('dl', { class: 'facts' });
	for (const [k, v] of rows) {
		if (v === undefined || v === null || v === '')
			continue;
		append(dl, [h('dt', {}, k), h('dd', {}, v)]);
	}
	return dl;
}

/*
 * A table: columns are {label, num?, cell(row) -> Node|string, narrow?}.
 * narrow: false hides the column on phone widths.
 */
export function table(columns, rows, rowClass) {
	const head = h('tr', {}, columns.map((c) =>
		h('th', { class: [c.num ? 'num' : '', c.wide ? 'hide-narrow' : ''].join(' ').trim() || null }, c.label)));
	const body = rows.map((r) => h('tr', { class: rowClass ? rowClass(r) : null },
		columns.map((c) => h('td', {
			class: [c.num ? 'num' : '', c.wrap ? 'wrap' : '', c.wide ? 'hide-narrow' : ''].join(' ').trim() || null,
		}, c.cell(r)))));
	return h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, head), h('tbody', {}, body)));
}

/* A command someone should run, with a copy button that works without HTTPS too. */
export function command(text) {
	const pre = h('pre', { 'data-testid': 'command' }, text);
	const btn = h('button', { type: 'button', title: 'Copy to the clipboard' }, 'Copy');
	btn.addEventListener('click', async () => {
		try {
			if (!navigator.clipboard || !window.isSecureContext)
				throw new Error('no clipboard API');
			await navigator.clipboard.writeText(text);
		} catch {
			/* Plain http from another host has no clipboard API: select the text instead. */
			const range = document.createRange();
			range.selectNodeContents(pre);
			const sel = window.getSelection();
			sel.removeAllRanges();
			sel.addRange(range);
			try { document.execCommand('copy'); } catch { /* selected is the best we can do */ }
		}
		btn.textContent = 'Copied';
		setTimeout(() => { btn.textContent = 'Copy'; }, 1500);
	});
	return h('div', { class: 'cmd' }, pre, btn);
}

/* An empty state: what is missing and what to do about it. */
export function empty(title, ...kids) {
	return h('div', { class: 'empty', 'data-testid': 'empty' }, h('p', {}, h('strong', {}, title)), ...kids);
}

export function badge(text, cls) {
	return h('span', { class: 'badge ' + (cls || String(text)) }, text);
}
