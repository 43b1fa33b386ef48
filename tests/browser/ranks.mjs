/*
 * The job page of a distributed job in headless chromium: its ranks are
 * listed (node, step time, the share of a step each waits in collectives)
 * and the rank the others wait for is marked the straggler, named first in
 * the headline; a balanced job lists its ranks and names no straggler; a
 * job with ranks on other nodes says so.  The ranks report through the API
 * as a job not written in Python would.  Screenshots go to
 * $DLPROF_BUILDDIR/tests/browser/screenshots/.
 */
import { Tap } from './lib/tap.mjs';
import { browserMissing, withDaemon, launch, open, screenshot } from './lib/harness.mjs';

const tap = new Tap(11);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

/* Two batches of ten steps of 0.5 s (the first is the rank's warm-up): data and wait as given. */
async function steps(d, id, rank, comm, data) {
	for (const seq of [1, 2]) {
		const t = Date.now() / 1000, samples = [];
		for (let i = 0; i < 10; i++) {
			samples.push({ t: t + i / 100, name: 'step_time_s', value: 0.5 });
			samples.push({ t: t + i / 100, name: 'comm_wait_s', value: comm });
			samples.push({ t: t + i / 100, name: 'phase_time_s', phase: 'data', value: data });
			samples.push({ t: t + i / 100, name: 'samples_per_s', value: 128 });
		}
		await d.api('POST', `jobs/${id}/metrics`, { samples, rank, seq, stream: 'r' + rank });
	}
}

async function job(d, ext, world, here, slow) {
	let id;
	for (let r = 0; r < here; r++) {
		const j = await d.api('POST', 'jobs', { workload: 'ranks-page', external_id: ext,
			rank: { rank: r, world_size: world, local_rank: r, node: 'node-a', nodes: world > here ? 2 : 1 } });
		id = j.id;
	}
	for (let r = 0; r < here; r++)
		await steps(d, id, r, r === slow ? 0.02 : 0.2, r === slow ? 0.2 : 0.02);
	return id;
}

await withDaemon(tap, async (d) => {
	const b = await launch();
	try {
		const slowJob = await job(d, 'run:slow', 4, 4, 2);
		const fineJob = await job(d, 'run:fine', 4, 2, -1);
		const page = await b.page();
		page.setDefaultTimeout(10000);

		await open(page, d.base, `jobs/${slowJob}`);
		await page.waitForSelector('[data-testid=ranks] tbody tr');
		const rows = await page.$$eval('[data-testid=ranks] tbody tr', (trs) => trs.map((tr) => tr.textContent));
		tap.equal(rows.length, 4, 'straggling job: all four ranks are listed');
		tap.ok(/straggler/.test(rows[2]) && !rows.filter((_, i) => i !== 2).some((r) => /straggler/.test(r)),
			'straggling job: rank 2, and only rank 2, is marked the straggler', rows);
		tap.ok(/node-a/.test(rows[0]) && /40 ?%/.test(rows[0]) && /4(\.0)? ?%/.test(rows[2]),
			'straggling job: each rank shows its node and the share of a step it waits', rows);
		const head = await page.textContent('[data-testid=diagnosis]');
		tap.ok(/A straggler/.test(head) && /rank 2 on node-a/.test(head) && /data phase/.test(head),
			'straggling job: the headline names rank 2, its node and its data phase', head);
		await screenshot(page, 'job-ranks-straggler-1280-light');
		tap.ok(page.problems.length === 0, 'straggling job page: no console errors', page.problems);

		await page.setViewportSize({ width: 390, height: 900 });
		await open(page, d.base, `jobs/${slowJob}`);
		await page.waitForSelector('[data-testid=ranks] tbody tr');
		const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
		tap.ok(overflow <= 1, 'straggling job at 390 px: no sideways scrolling', { overflow });
		await screenshot(page, 'job-ranks-straggler-390-light');

		await page.setViewportSize({ width: 1280, height: 900 });
		await open(page, d.base, `jobs/${fineJob}`);
		await page.waitForSelector('[data-testid=ranks] tbody tr');
		const fine = await page.textContent('[data-testid=ranks]');
		tap.ok(/Ranks: 2 of 4/.test(fine) && !/straggler/.test(fine), 'balanced job: its ranks, no straggler', fine);
		const note = await page.textContent('[data-testid=ranks-elsewhere]');
		tap.ok(/2 of its 4 ranks run on other nodes/.test(note), 'a job spanning nodes says this node shows its own ranks', note);
		tap.ok(!/straggler/i.test(await page.textContent('[data-testid=diagnosis]')), 'balanced job: the headline names no straggler');
		tap.ok(page.problems.length === 0, 'balanced job page: no console errors', page.problems);
	} finally {
		await b.close();
	}
});
