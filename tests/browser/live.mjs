/*
 * Live charts in headless chromium: the node page follows the sampler over
 * the live stream (server-sent events), and each new point is on its chart
 * within 2 s of the time it was sampled at; a job's reported samples are on
 * its throughput chart within 2 s of being posted; with the stream refused
 * the page falls back to polling and still moves.  The daemon samples
 * every 0.5 s; the page's own poll is 5 s (node) and 15 s while streaming,
 * so only the stream can meet the 2 s.
 */
import { Tap } from './lib/tap.mjs';
import { browserMissing, withDaemon, launch, open, screenshot } from './lib/harness.mjs';

const tap = new Tap(7);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/*
 * Watches the page's charts for ms: each time the newest point of any chart
 * moves, the point's time and the wall time it was seen.  Both clocks are
 * this machine's.
 */
async function watchPoints(page, ms, selector = '[data-chart]') {
	return page.evaluate(({ ms, selector }) => new Promise((resolve) => {
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
		}, 25);
		setTimeout(() => {
			clearInterval(timer);
			resolve(seen);
		}, ms);
	}), { ms, selector });
}

await withDaemon(tap, async (d) => {
	const b = await launch();
	try {
		const page = await b.page();
		page.setDefaultTimeout(15000);
		await open(page, d.base, 'node');
		await page.waitForFunction(() => document.documentElement.dataset.live === 'sse');
		tap.ok(true, 'the node page opens the live stream');
		const seen = await watchPoints(page, 6000);
		const lags = seen.map((s) => s.at - s.t);
		tap.ok(seen.length >= 5, 'new points reach the node charts while the page stays open', seen);
		tap.ok(lags.length && Math.max(...lags) <= 2.0, 'each new point is on a chart within 2 s of being sampled', lags);
		await screenshot(page, 'live-node');

		/* A job's own metrics: posted now, on its throughput chart within 2 s (the "ingest" event). */
		const job = await d.api('POST', 'jobs', { workload: 'live-job' });
		await d.api('POST', `jobs/${job.id}/metrics`, { samples: [{ t: Date.now() / 1000 - 1, name: 'samples_per_s', value: 100 }] });
		await open(page, d.base, `jobs/${job.id}`);
		await page.waitForFunction(() => document.documentElement.dataset.live === 'sse');
		const lagsJob = [];
		for (let k = 0; k < 3; k++) {
			const t = Math.round(Date.now()) / 1000;
			await d.api('POST', `jobs/${job.id}/metrics`, { samples: [{ t, name: 'samples_per_s', value: 200 + k }] });
			const shown = await page.waitForFunction((want) => [...document.querySelectorAll('[data-chart]')]
				.some((el) => Number(el.dataset.lastT) >= want - 0.001), t, { timeout: 5000 }).then(() => Date.now() / 1000, () => Infinity);
			lagsJob.push(shown - t);
			await sleep(700);
		}
		tap.ok(Math.max(...lagsJob) <= 2.0, "a job's reported sample is on its chart within 2 s of being posted", lagsJob);
		tap.ok(page.problems.length === 0, 'no console errors while streaming', page.problems);

		/* The stream refused (a proxy, the daemon's streams all taken): polling carries on. */
		const fallback = await b.page();
		await fallback.route('**/api/v1/jobs/*/live', (r) => r.fulfill({ status: 503, body: '{"error":"busy","detail":"test"}' }));
		await open(fallback, d.base, 'node');
		const polled = await watchPoints(fallback, 7000);
		const mode = await fallback.evaluate(() => document.documentElement.dataset.live);
		tap.ok(mode !== 'sse' && polled.length >= 1, 'without the stream the node page still moves, by polling', { mode, polled });
	} finally {
		await b.close();
	}
}, ['--interval', '0.5']);
