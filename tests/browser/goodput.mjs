/*
 * The workload page of a goodput workload in headless chromium: with a
 * small noise scale it shows the noise scale, the baseline, and per config
 * the raw and the learning speed-up, the smallest batch first although the
 * largest has the most samples/s; a goodput workload whose jobs report no
 * gradient noise says it ranks by throughput and shows no efficiency.  The
 * jobs report through the API as a job not written in Python would.
 * Screenshots go to $DLPROF_BUILDDIR/tests/browser/screenshots/.
 */
import { Tap } from './lib/tap.mjs';
import { browserMissing, withDaemon, launch, open, screenshot } from './lib/harness.mjs';

const tap = new Tap(10);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

const KNOBS = { intra_threads: { values: [1] }, interop_threads: { values: [1] }, gpus: { values: [0] },
	batch: { values: [32, 512], default: 32, runtime: true } };
const SPS = { 32: 600, 512: 1200 };

/* A job following the daemon's batch for 30 reports of 10 steps; noise scale 20 when noise is set. */
async function job(d, workload, noise, t0) {
	const j = await d.api('POST', 'jobs', { workload, knobs: KNOBS, objective: 'goodput' });
	let config = j.config, t = t0;
	for (let k = 0; k < 30; k++) {
		const samples = [], m = config.batch;
		for (let i = 0; i < 10; i++) {
			t += 0.5;
			const wobble = 1 + 0.02 * Math.sin(t);
			samples.push({ t, name: 'samples_per_s', value: SPS[m] * wobble }, { t, name: 'global_batch', value: m });
			if (noise)
				samples.push({ t, name: 'grad_batch_small', value: m / 4 }, { t, name: 'grad_sqnorm_small', value: (4 + 80 / (m / 4)) * wobble },
					{ t, name: 'grad_batch_large', value: m }, { t, name: 'grad_sqnorm_large', value: (4 + 80 / m) * wobble });
		}
		config = (await d.api('POST', `jobs/${j.id}/metrics`, { samples, config })).config;
	}
	await d.api('POST', `jobs/${j.id}/end`, { exit_status: 0 });
}

const cells = (page) => page.$$eval('[data-testid=goodput] tbody tr', (trs) =>
	trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));

await withDaemon(tap, async (d) => {
	const b = await launch();
	try {
		const t0 = Date.now() / 1000 - 3600;
		await job(d, 'gp-page', true, t0);
		await job(d, 'gp-page-plain', false, t0);
		const page = await b.page();
		page.setDefaultTimeout(10000);

		await open(page, d.base, 'workloads/gp-page?objective=goodput');
		await page.waitForSelector('[data-testid=goodput] tbody tr');
		const rows = await cells(page);
		tap.equal(rows.length, 2, 'goodput: both batches are listed', rows);
		tap.ok(/batch 32/.test(rows[0][0]) && /batch 512/.test(rows[1][0]), 'goodput: batch 32 first, batch 512 second', rows);
		tap.ok(rows[0][4] === '×1' && rows[0][5] === '×1', 'goodput: the baseline has speed-ups of ×1', rows[0]);
		tap.ok(/^×1\.9|^×2(\.0)?$|^×2\.0/.test(rows[1][4]) && Number(rows[1][5].slice(1)) < 0.25,
			'goodput: batch 512 is twice as fast raw, under a quarter in learning speed-up', rows[1]);
		const card = await page.textContent('[data-testid=goodput]');
		tap.ok(/Noise scale φ\s*(19|20|21)(\.\d+)? ± [\d.]+ % \(from \d+ steps\)/.test(card) && /M₀ 32/.test(card),
			'goodput: the noise scale and the baseline batch are shown', card);
		await screenshot(page, 'workload-goodput-1280-light');
		tap.ok(page.problems.length === 0, 'goodput page: no console errors', page.problems);

		await open(page, d.base, 'workloads/gp-page-plain?objective=goodput');
		await page.waitForSelector('[data-testid=goodput] tbody tr');
		const plain = await page.textContent('[data-testid=goodput]');
		tap.ok(/samples\/s: the efficiency is unknown/.test(plain) && /no job reported gradient noise/.test(plain),
			'no noise figures: the page says configs are ranked by throughput', plain);
		const prow = (await cells(page))[0];
		tap.ok(prow[3] === '–' && prow[5] === '–', 'no noise figures: no efficiency and no learning speed-up shown', prow);
		tap.ok(page.problems.length === 0, 'plain goodput page: no console errors', page.problems);
	} finally {
		await b.close();
	}
});
