/*
 * The dashboard at scale in headless chromium: 50 running jobs (real
 * sleeping processes the sampler samples) of 8 threads, each with an hour
 * of history fed through the ingest route (lib/history.mjs), and one job
 * of 256 threads.  The node page lists the 50 jobs in one table that
 * sorts and filters, fits a phone, and says nothing is missing; a job's
 * heatmap holds its 8 threads over the hour's 360 columns and the wide
 * job's its 256.  How long the node page and the heatmaps take is
 * reported (# lines), not asserted: timings are bench/web's (bench/README.md).
 */
import { Tap } from './lib/tap.mjs';
import path from 'node:path';
import { browserMissing, withDaemon, launch, open, screenshot, SHOTS } from './lib/harness.mjs';
import { seedScale } from './lib/history.mjs';

const tap = new Tap(12);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

const JOBS = 50, THREADS = 8, POINTS = 360, WIDE = 256;

/* Milliseconds from navigation to the page's first refresh drawn. */
async function loadMs(page, base, route) {
	const t0 = Date.now();
	await open(page, base, route);
	return Date.now() - t0;
}

await withDaemon(tap, async (d) => {
	const t0 = Date.now();
	const seeded = await seedScale(d, { jobs: JOBS, threads: THREADS, points: POINTS, big: WIDE });
	tap.diag(`seeded ${JOBS} jobs x ${THREADS} threads and one of ${WIDE} over ${POINTS} steps in ${Date.now() - t0} ms`);
	const b = await launch();
	try {
		const page = await b.page();
		page.setDefaultTimeout(20000);
		const times = [];
		for (let k = 0; k < 3; k++)
			times.push(await loadMs(page, d.base, 'node'));
		tap.diag(`node page with ${JOBS + 1} running jobs: first refresh drawn after ${times.join(', ')} ms`);
		const rows = await page.$$eval('[data-testid=running-jobs] tbody tr', (tr) => tr.length);
		tap.equal(rows, JOBS + 1, 'node page: one row per running job');
		const first = await page.$$eval('[data-testid=running-jobs] tbody tr', (tr) => tr.map((r) => r.textContent));
		tap.ok(page.problems.length === 0, 'node page at scale: no console errors', page.problems);
		await screenshot(page, 'scale-node-1280-light');

		/* Sorted by job id, ascending, then by CPU again; filtered to one workload. */
		await page.click('[data-testid=running-jobs] th button >> text=Job');
		await page.click('[data-testid=running-jobs] th button >> text=Job');
		const ids = await page.$$eval('[data-testid=running-jobs] tbody tr td:nth-child(1)', (td) => td.map((x) => Number(x.textContent)));
		tap.ok(ids.length === JOBS + 1 && ids.every((x, i) => i === 0 || x > ids[i - 1]), 'node page: the table sorts by job', ids);
		await page.fill('[data-testid=job-filter]', 'scale-bert');
		const bert = await page.$$eval('[data-testid=running-jobs] tbody tr', (tr) => tr.map((r) => r.textContent));
		tap.ok(bert.length === Math.ceil((JOBS - 1) / 4) && bert.every((r) => r.includes('scale-bert')),
			'node page: the filter keeps the jobs of one workload', bert.length);
		tap.ok(first.length > 0, 'node page: rows read before sorting');

		await page.emulateMedia({ colorScheme: 'dark' });
		await page.setViewportSize({ width: 390, height: 900 });
		await open(page, d.base, 'node');
		const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
		tap.ok(overflow <= 1, 'node page with 51 jobs at 390 px: no sideways scrolling', { overflow });
		await screenshot(page, 'scale-node-390-dark');
		await page.emulateMedia({ colorScheme: 'light' });
		await page.setViewportSize({ width: 1280, height: 900 });

		/* One job's hour: 8 threads by 360 columns. */
		const job = seeded.jobs[1];
		const tJob = await loadMs(page, d.base, `jobs/${job.id}`);
		const heat = await page.$eval('[data-chart=threads]', (c) => ({ threads: Number(c.dataset.threads), columns: Number(c.dataset.columns),
			drawMs: Number(c.dataset.drawMs) }));
		tap.ok(heat.threads === THREADS && heat.columns >= POINTS - 2 && heat.columns <= POINTS + 10,
			`job page: the heatmap holds its ${THREADS} threads over the hour`, heat);
		tap.diag(`job page of ${THREADS} threads over an hour: first refresh after ${tJob} ms, heatmap drawn in ${heat.drawMs} ms`);
		await screenshot(page, 'scale-job-1280-light');
		tap.ok(page.problems.length === 0, 'job page at scale: no console errors', page.problems);

		/* The wide job: 256 threads by 360 columns, one canvas. */
		const tWide = await loadMs(page, d.base, `jobs/${seeded.big.id}`);
		const wide = await page.$eval('[data-chart=threads]', (c) => ({ threads: Number(c.dataset.threads), columns: Number(c.dataset.columns),
			drawMs: Number(c.dataset.drawMs), elements: document.querySelectorAll('[data-testid=threads] *').length }));
		tap.ok(wide.threads === WIDE + 0 && wide.columns >= POINTS - 2, `job page: the heatmap holds ${WIDE} threads`, wide);
		tap.ok(wide.elements < 60, 'the heatmap draws on a canvas: no element per thread or point', wide);
		tap.diag(`job page of ${WIDE} threads over an hour: first refresh after ${tWide} ms, heatmap drawn in ${wide.drawMs} ms`);
		await screenshot(page, 'scale-wide-job');
		await page.locator('[data-testid=threads]').screenshot({ path: path.join(SHOTS, 'scale-wide-heatmap.png') });
		tap.ok(page.problems.length === 0, 'wide job page: no console errors', page.problems);
	} finally {
		await b.close();
		seeded.stop();
	}
}, ['--ingest-rate', '100000', '--ingest-burst', '100000']);
