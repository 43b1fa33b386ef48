/*
 * Live charts in headless chromium: the node page follows the sampler over
 * the live stream (server-sent events): new points reach its charts more
 * often than the page re-reads the node, so they came over the stream; a
 * job's reported samples are on its throughput chart before the page's own
 * re-read (15 s while streaming) could have brought them: the stream's
 * "ingest" event did; with the stream refused the page falls back to
 * polling and still moves.  The daemon samples every 0.5 s.  Mechanisms,
 * not latencies, are judged: how fast a loaded machine draws is the
 * benchmarks' business.
 */
import { Tap } from './lib/tap.mjs';
import { browserMissing, withDaemon, launch, open, screenshot } from './lib/harness.mjs';

const tap = new Tap(7);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* The page's seconds between re-reads while the stream is up (web/js/app.js, LIVE_REFRESH_S). */
const LIVE_REFRESH_S = 15;

/* Counts the page's reads of url (matched) from now on. */
function countReads(page, re) {
	const c = { n: 0 };
	page.on('request', (r) => {
		if (re.test(r.url()))
			c.n++;
	});
	return c;
}

/*
 * Watches the page's charts for at most ms, until want new points were seen:
 * each time the newest point of any chart moves, the point's time and the
 * wall time it was seen.
 */
async function watchPoints(page, ms, want, selector = '[data-chart]') {
	return page.evaluate(({ ms, want, selector }) => new Promise((resolve) => {
		const seen = [];
		let last = -Infinity;
		const timer = setInterval(() => {
			for (const el of document.querySelectorAll(selector)) {
				const t = Number(el.dataset.lastT);
				if (Number.isFinite(t) && t > last) {
					if (last > -Infinity)
						seen.push({ t, at: Date.now() / 1000 });
					last = t;
				}
			}
			if (seen.length >= want) {
				clearInterval(timer);
				resolve(seen);
			}
		}, 25);
		setTimeout(() => {
			clearInterval(timer);
			resolve(seen);
		}, ms);
	}), { ms, want, selector });
}

await withDaemon(tap, async (d) => {
	const b = await launch();
	try {
		const page = await b.page();
		page.setDefaultTimeout(15000);
		await open(page, d.base, 'node');
		await page.waitForFunction(() => document.documentElement.dataset.live === 'sse');
		tap.ok(true, 'the node page opens the live stream');
		/* Each re-read of the page asks for the node once (web/js/pages/node.js). */
		const reads = countReads(page, /\/api\/v1\/node$/);
		const seen = await watchPoints(page, 60000, 8);
		tap.ok(seen.length >= 8, 'new points reach the node charts while the page stays open', seen);
		tap.ok(seen.length > reads.n + 1, 'they come over the stream: more new points than re-reads of the page',
			{ points: seen.length, reads: reads.n });
		await screenshot(page, 'live-node');

		/* A job's own metrics: posted now, on its throughput chart before the page's own re-read (the "ingest" event). */
		const job = await d.api('POST', 'jobs', { workload: 'live-job' });
		await d.api('POST', `jobs/${job.id}/metrics`, { samples: [{ t: Date.now() / 1000 - 1, name: 'samples_per_s', value: 100 }] });
		await open(page, d.base, `jobs/${job.id}`);
		await page.waitForFunction(() => document.documentElement.dataset.live === 'sse');
		const lagsJob = [];
		for (let k = 0; k < 3; k++) {
			const t = Math.round(Date.now()) / 1000;
			await d.api('POST', `jobs/${job.id}/metrics`, { samples: [{ t, name: 'samples_per_s', value: 200 + k }] });
			const shown = await page.waitForFunction((want) => [...document.querySelectorAll('[data-chart]')]
				.some((el) => Number(el.dataset.lastT) >= want - 0.001), t, { timeout: 2 * LIVE_REFRESH_S * 1000 })
				.then(() => Date.now() / 1000, () => Infinity);
			lagsJob.push(shown - t);
			await sleep(700);
		}
		tap.ok(Math.max(...lagsJob) < LIVE_REFRESH_S,
			"a job's reported sample is on its chart before the page's own re-read could bring it", lagsJob);
		tap.ok(page.problems.length === 0, 'no console errors while streaming', page.problems);

		/* The stream refused (a proxy, the daemon's streams all taken): polling carries on. */
		const fallback = await b.page();
		await fallback.route('**/api/v1/jobs/*/live', (r) => r.fulfill({ status: 503, body: '{"error":"busy","detail":"test"}' }));
		await open(fallback, d.base, 'node');
		const polled = await watchPoints(fallback, 30000, 1);
		const mode = await fallback.evaluate(() => document.documentElement.dataset.live);
		tap.ok(mode !== 'sse' && polled.length >= 1, 'without the stream the node page still moves, by polling', { mode, polled });
	} finally {
		await b.close();
	}
}, ['--interval', '0.5']);
