/*
 * The job page's headline in headless chromium: a job that reports a data
 * phase taking most of each step is shown as input-bound, with its hint, at
 * the top of its page; a job whose steps are all compute says nothing holds
 * it back.  The jobs report through the API (no process of their own), and
 * the daemon sustains verdicts for 2 s instead of 60 so the test is short.
 * Screenshots go to $DLPROF_BUILDDIR/tests/browser/screenshots/.
 */
import { Tap } from './lib/tap.mjs';
import { browserMissing, withDaemon, launch, open, screenshot } from './lib/harness.mjs';

const tap = new Tap(8);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Four reports a second apart of ten steps each: data takes share of every step. */
async function report(d, id, share) {
	for (let k = 0; k < 4; k++) {
		const t = Date.now() / 1000;
		const samples = [];
		for (let i = 0; i < 10; i++) {
			const at = t - 1 + i / 10;
			samples.push({ t: at, name: 'step_time_s', value: 0.1 });
			samples.push({ t: at, name: 'phase_time_s', phase: 'data', value: 0.1 * share });
			samples.push({ t: at, name: 'phase_time_s', phase: 'forward', value: 0.1 * (1 - share) });
		}
		await d.api('POST', `jobs/${id}/metrics`, { samples });
		await sleep(1000);
	}
}

await withDaemon(tap, async (d) => {
	const b = await launch();
	try {
		const slow = await d.api('POST', 'jobs', { workload: 'diag-input' });
		const fine = await d.api('POST', 'jobs', { workload: 'diag-healthy' });
		await Promise.all([report(d, slow.id, 0.7), report(d, fine.id, 0.05)]);
		const rep = await d.api('GET', `jobs/${slow.id}/report`);
		tap.ok(rep.verdicts.some((v) => v.kind === 'input_bound'), 'the API calls the job input-bound', rep);

		const page = await b.page();
		page.setDefaultTimeout(10000);
		await open(page, d.base, `jobs/${slow.id}`);
		const head = await page.textContent('[data-testid=diagnosis]');
		tap.ok(/What holds this job back/.test(head) && /Input-bound/.test(head) && /loading data takes 70% of each step/.test(head),
			'input-bound job: the headline names the verdict and its hint', head);
		const order = await page.evaluate(() => {
			const main = document.querySelector('main');
			const diag = main.querySelector('[data-testid=diagnosis]');
			return [...main.querySelectorAll('section.card')].indexOf(diag);
		});
		tap.equal(order, 0, 'input-bound job: the headline is the first card of the page');
		await screenshot(page, 'job-diagnosis-1280-light');
		tap.ok(page.problems.length === 0, 'input-bound job page: no console errors', page.problems);

		await page.emulateMedia({ colorScheme: 'dark' });
		await page.setViewportSize({ width: 390, height: 900 });
		await open(page, d.base, `jobs/${slow.id}`);
		await screenshot(page, 'job-diagnosis-390-dark');
		const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
		tap.ok(overflow <= 1, 'input-bound job at 390 px: no sideways scrolling', { overflow });

		await page.emulateMedia({ colorScheme: 'light' });
		await page.setViewportSize({ width: 1280, height: 900 });
		await open(page, d.base, `jobs/${fine.id}`);
		const ok = await page.textContent('[data-testid=diagnosis]');
		tap.ok(/no problem found/i.test(ok) && !/Input-bound/.test(ok), 'healthy job: the headline says nothing holds it back', ok);
		await screenshot(page, 'job-healthy-1280-light');
		tap.ok(page.problems.length === 0, 'healthy job page: no console errors', page.problems);
	} finally {
		await b.close();
	}
}, ['--diag-sustain', '2', '--store-interval', '1']);
