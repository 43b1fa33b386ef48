/*
 * The dashboard's shell: hash routes (#/node, #/jobs, #/jobs/ID,
 * #/compare?jobs=ID,ID, #/workloads, #/workloads/NAME, #/cluster) so every page works from the one
 * index.html the daemon serves, and the live loop: a page that follows a
 * job (liveJob: its id, 0 the node) gets each sampler tick from the live
 * stream (server-sent events, /api/v1/jobs/ID/live) as it is sampled, and
 * is re-read from the store now and then; without the stream (an old
 * browser, the daemon's streams all taken, a proxy that buffers) the page
 * is refreshed every few seconds instead.  Nothing runs while the tab is
 * hidden.  A page module exports mount(el, args, query) returning
 * {refresh(signal), every, liveJob?, onLive?(event), destroy?, retheme?}.
 * Page modules load when their page is first opened: the node page does
 * not fetch the job page's heatmap or the workload page's surfaces.
 */
import { api } from './api.js';
import { h, replace } from './dom.js';

const ROUTES = [
	{ re: /^node$/, page: () => import('./pages/node.js'), tab: 'node' },
	{ re: /^jobs$/, page: () => import('./pages/jobs.js'), tab: 'jobs' },
	{ re: /^jobs\/([^/]+)$/, page: () => import('./pages/job.js'), tab: 'jobs' },
	{ re: /^compare$/, page: () => import('./pages/compare.js'), tab: 'compare' },
	{ re: /^workloads$/, page: () => import('./pages/workloads.js'), tab: 'workloads' },
	{ re: /^workloads\/([^/]+)$/, page: () => import('./pages/workload.js'), tab: 'workloads' },
	{ re: /^cluster$/, page: () => import('./pages/cluster.js'), tab: 'cluster' },
];

const main = document.getElementById('main');
const live = document.getElementById('live');

const state = {
	view: null,      /* the mounted page */
	timer: 0,        /* the next refresh */
	ctrl: null,      /* aborts the refresh in flight */
	seq: 0,          /* route generation: late answers of an old page are dropped */
	stream: null,    /* the page's live EventSource */
	began: 0,        /* when the last refresh started (ms) */
	dirty: false,    /* the job reported samples the refresh under way may have missed */
};

/* Re-reads from the store while the live stream is up: ingest-fed charts and the rest of the page. */
const LIVE_REFRESH_S = 15;

function closeStream() {
	if (state.stream)
		state.stream.close();
	state.stream = null;
	document.documentElement.dataset.live = 'poll';
}

/* A refresh as soon as one a second allows (the job reported samples). */
function soon(seq) {
	clearTimeout(state.timer);
	state.timer = setTimeout(() => tick(seq), Math.max(0, state.began + 1000 - Date.now()));
}

/* Opens the live stream of the current page, if it follows a job and has none yet. */
function openStream(seq) {
	const view = state.view;
	if (state.stream || !view || view.liveJob === undefined || !view.onLive || !window.EventSource)
		return;
	const es = new EventSource(`api/v1/jobs/${encodeURIComponent(view.liveJob)}/live`);
	state.stream = es;
	es.onopen = () => {
		document.documentElement.dataset.live = 'sse';
	};
	es.onmessage = (m) => {
		if (seq !== state.seq || state.stream !== es)
			return;
		let ev;
		try {
			ev = JSON.parse(m.data);
		} catch {
			return;
		}
		if (Number.isFinite(ev.t) && main.dataset.loaded === 'true')
			view.onLive(ev);
	};
	/* The job reported samples: re-read the page now, unless a read is under way. */
	es.addEventListener('ingest', () => {
		if (seq !== state.seq || state.stream !== es)
			return;
		state.dirty = true;
		if (!state.ctrl)
			soon(seq);
	});
	/* The browser retries by itself; a stream refused for good (404, 503) is closed: polling goes on. */
	es.onerror = () => {
		if (state.stream === es && es.readyState === EventSource.CLOSED)
			document.documentElement.dataset.live = 'poll';
		else if (state.stream === es)
			document.documentElement.dataset.live = 'reconnecting';
	};
}

function parseHash() {
	const raw = location.hash.replace(/^#\/?/, '');
	const [path, qs] = raw.split('?');
	return { path: path || 'node', query: new URLSearchParams(qs || '') };
}

function setLive(text, cls) {
	live.textContent = text;
	live.className = 'live ' + (cls || '');
	document.documentElement.dataset.polling = cls === 'on' || cls === 'error' ? 'on' : 'off';
}

function stop() {
	clearTimeout(state.timer);
	state.timer = 0;
	if (state.ctrl)
		state.ctrl.abort();
	state.ctrl = null;
}

async function tick(seq) {
	if (seq !== state.seq || !state.view)
		return;
	stop();
	if (document.visibilityState === 'hidden') {
		setLive('paused', 'off');
		return;
	}
	const ctrl = new AbortController();
	state.ctrl = ctrl;
	state.began = Date.now();
	state.dirty = false;
	try {
		await state.view.refresh(ctrl.signal);
		/* Hidden or gone while it ran: its answer is not news, and no next poll. */
		if (seq !== state.seq || ctrl.signal.aborted)
			return;
		/* A page with nothing left to follow (an ended job) stops polling. */
		setLive(state.view.every ? 'live' : 'up to date', state.view.every ? 'on' : 'off');
		main.dataset.loaded = 'true';
		const box = main.querySelector(':scope > .refresh-error');
		if (box)
			box.remove();
	} catch (e) {
		if (e.name === 'AbortError' || seq !== state.seq || ctrl.signal.aborted)
			return;
		setLive(e.status ? 'error' : 'daemon not answering', 'error');
		showError(e);
		main.dataset.loaded = 'error';
	} finally {
		if (state.ctrl === ctrl)
			state.ctrl = null;
	}
	if (seq !== state.seq || document.visibilityState === 'hidden')
		return;
	if (!state.view.every || state.view.liveJob === undefined)
		closeStream();
	else
		openStream(seq);
	const streaming = state.stream && state.stream.readyState === EventSource.OPEN;
	if (state.view.every && state.dirty)
		soon(seq);
	else if (state.view.every)
		state.timer = setTimeout(() => tick(seq), (streaming ? Math.max(LIVE_REFRESH_S, state.view.every) : state.view.every) * 1000);
}

/* A failed refresh shows its reason above the page, and clears it when it works again. */
function showError(e) {
	let box = main.querySelector(':scope > .refresh-error');
	if (!box) {
		box = h('p', { class: 'card error refresh-error', role: 'alert' });
		main.prepend(box);
	}
	box.textContent = `Could not load: ${e.message}`;
}

async function route() {
	stop();
	closeStream();
	state.seq++;
	if (state.view && state.view.destroy)
		state.view.destroy();
	state.view = null;
	delete main.dataset.loaded;
	const { path, query } = parseHash();
	let m = null;
	const r = ROUTES.find((x) => (m = x.re.exec(path)));
	for (const a of document.querySelectorAll('.tabs a'))
		a.classList.toggle('active', !!r && a.dataset.page === r.tab);
	replace(main);
	if (!r) {
		replace(main, h('div', { class: 'empty' }, 'No such page. ', h('a', { href: '#/node' }, 'Go to the node.')));
		return;
	}
	let args;
	try {
		args = m.slice(1).map(decodeURIComponent);
	} catch {
		args = m.slice(1);
	}
	const seq = state.seq;
	let page;
	try {
		page = await r.page();
	} catch (e) {
		replace(main, h('p', { class: 'card error', role: 'alert' }, `Could not load this page: ${e.message}`));
		main.dataset.loaded = 'error';
		return;
	}
	/* Another page was asked for while this one loaded: that one wins. */
	if (seq !== state.seq)
		return;
	state.view = page.mount(main, args, query);
	document.title = 'dlprofd · ' + (state.view.title || r.tab);
	window.scrollTo(0, 0);
	tick(state.seq);
}

async function header() {
	try {
		const n = await api('node');
		const host = document.getElementById('host');
		host.textContent = [n.hostname, n.hw_class].filter(Boolean).join(' · ');
		if (n.hostname)
			document.title = document.title + ' · ' + n.hostname;
	} catch {
		/* the page itself reports an unreachable daemon */
	}
}

document.addEventListener('visibilitychange', () => {
	if (document.visibilityState === 'hidden') {
		stop();
		closeStream();
		setLive('paused', 'off');
	} else {
		tick(state.seq);
	}
});

/* Charts read their colours at creation: redraw them when the scheme flips. */
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
	if (state.view && state.view.retheme)
		state.view.retheme();
});

window.addEventListener('hashchange', route);
if (!location.hash)
	history.replaceState(null, '', '#/node');
route();
header();
