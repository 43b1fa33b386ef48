/*
 * Jobs side by side in headless chromium: three jobs of two workloads
 * report (lib/seed.mjs's reporting job, which follows the configs the
 * tuner answers), two are ticked on the Jobs page and compared; the view
 * overlays their throughput, step time and loss from each one's start,
 * every point sent, and tabulates each job's config, verdicts and energy;
 * its address reproduces it in a fresh page; the picker changes it.  Dark
 * and 390 px keep working.  Screenshots go to
 * $DLPROF_BUILDDIR/tests/browser/screenshots/.
 */
import fs from 'node:fs';
import { Tap } from './lib/tap.mjs';
import { browserMissing, withDaemon, launch, open, screenshot } from './lib/harness.mjs';
import { reportingJob } from './lib/seed.mjs';

const tap = new Tap(18);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

await withDaemon(tap, async (d) => {
	const a = await reportingJob(d, { workload: 'cmp-lstm', params: { batch: 64 } }, { points: 120 });
	const b2 = await reportingJob(d, { workload: 'cmp-lstm', params: { batch: 64 } }, { points: 80, t0: Math.floor(Date.now() / 1000) - 300 });
	const c = await reportingJob(d, { workload: 'cmp-resnet', params: { batch: 32 } }, { points: 40, loss: false });
	await d.api('POST', `jobs/${c.id}/end`, { exit_status: 1 });
	const b = await launch({ acceptDownloads: true });
	try {
		const page = await b.page();
		page.setDefaultTimeout(15000);
		await open(page, d.base, 'jobs?state=all');
		tap.ok(await page.isDisabled('[data-testid=compare-go]'), 'jobs page: Compare waits for two ticked jobs');
		await page.check(`input[data-job="${a.id}"]`);
		await page.check(`input[data-job="${b2.id}"]`);
		await page.click('[data-testid=compare-go]');
		await page.waitForSelector('main[data-loaded="true"] [data-testid=compare-table]');
		tap.ok(page.url().endsWith(`#/compare?jobs=${a.id},${b2.id}`), 'Compare opens a view its address names', page.url());
		await page.waitForTimeout(100);
		const points = async (chart) => Number(await page.getAttribute(`[data-chart=${chart}]`, 'data-points'));
		tap.equal(await points('compare-throughput'), a.points + b2.points, 'throughput: every point of both jobs');
		tap.equal(await points('compare-loss'), a.points + b2.points, 'loss: every point of both jobs');
		const legend = await page.$$eval('[data-chart=compare-throughput] .u-legend th', (th) => th.map((x) => x.textContent));
		tap.ok(legend.some((l) => l.includes(`${a.id} cmp-lstm`)) && legend.some((l) => l.includes(`${b2.id} cmp-lstm`)),
			'one series per job, named by id and workload', legend);
		/* From each one's start: both begin at zero though one ran five minutes before the other. */
		const [dl] = await Promise.all([page.waitForEvent('download'),
			page.click('[data-chart=compare-throughput] ~ .chart-tools [data-testid=export-json]')]);
		const doc = JSON.parse(fs.readFileSync(await dl.path(), 'utf8'));
		const spans = doc.series.map((s) => [s.points[0][0], s.points[s.points.length - 1][0]]);
		tap.ok(doc.x === 'since the job\'s start' && spans.length === 2 && spans.every(([x0]) => x0 >= 0 && x0 < 1)
			&& Math.abs(spans[0][1] - (a.points - 1)) < 1.5 && Math.abs(spans[1][1] - (b2.points - 1)) < 1.5,
			'the axis is the time since each job\'s start: both from zero, each as long as it ran', spans);
		const rows = await page.$$eval('[data-testid=compare-table] tbody tr', (tr) => tr.map((r) => r.textContent));
		tap.ok(rows.length === 2 && rows.every((r) => /intra \d/.test(r) && /running/.test(r)),
			'the table gives each job\'s state and config', rows);
		tap.ok(rows.every((r) => /none|verdict|underuses|input_bound|no diagnosis/.test(r)), 'the table gives each job\'s verdicts', rows);
		/* Both reported from before they registered (b2 five minutes): each started then, as its Ran and its axis count. */
		const started = await page.$$eval('[data-testid=compare-table] tbody tr', (tr) =>
			tr.map((r) => Date.parse(r.cells[3].querySelector('time').getAttribute('datetime')) / 1000));
		tap.ok(started.length === 2 && Math.abs(started[0] - a.start) < 1 && Math.abs(started[1] - b2.start) < 1,
			'the table gives each job\'s start as its axis counts it: its first sample, sent before it registered',
			{ started, first: [a.start, b2.start] });
		tap.ok(page.problems.length === 0, 'compare page: no console errors', page.problems);
		await screenshot(page, 'compare-1280-light');

		/* The address alone reproduces the view. */
		const fresh = await b.page();
		await open(fresh, d.base, `compare?jobs=${a.id},${b2.id}`);
		await fresh.waitForTimeout(100);
		tap.equal(Number(await fresh.getAttribute('[data-chart=compare-throughput]', 'data-points')), a.points + b2.points,
			'the view\'s address reproduces it in a fresh page');
		await fresh.close();

		/* The picker adds the third, which reported no loss and ended. */
		await page.check(`[data-testid=compare-picker] input[data-job="${c.id}"]`);
		await page.click('[data-testid=compare-picker] ~ p [data-testid=compare-go]');
		await page.waitForFunction((want) => location.hash.endsWith(want), `=${a.id},${b2.id},${c.id}`);
		await page.waitForSelector('main[data-loaded="true"] [data-testid=compare-table]');
		await page.waitForTimeout(100);
		tap.equal(await points('compare-throughput'), a.points + b2.points + c.points, 'the picker adds a job to the view');
		tap.equal(await points('compare-loss'), a.points + b2.points, 'a job without loss adds none to the loss chart');
		const ended = await page.textContent('[data-testid=compare-table]');
		tap.ok(/ended/.test(ended), 'the ended job says so', ended);

		await page.emulateMedia({ colorScheme: 'dark' });
		await page.setViewportSize({ width: 390, height: 900 });
		await open(page, d.base, `compare?jobs=${a.id},${b2.id},${c.id}`);
		const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
		tap.ok(overflow <= 1, 'compare page at 390 px, dark: no sideways scrolling', { overflow });
		await screenshot(page, 'compare-390-dark');
		tap.ok(page.problems.length === 0, 'compare page, dark and narrow: no console errors', page.problems);

		await open(page, d.base, 'compare');
		tap.ok(/Pick two to eight jobs/.test(await page.textContent('main')), 'compare without jobs says what to do');
	} finally {
		await b.close();
	}
});
