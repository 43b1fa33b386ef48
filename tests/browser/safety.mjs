/*
 * The dashboard stays safe and light: hostile workload names, params and
 * phases show as text on every page (no element is created from them and
 * no handler runs); polling stops while the tab is hidden and resumes when
 * it shows; charts follow new samples without a reload; the page and its
 * scripts weigh under 200 KB as the browser loads them; dark mode changes
 * the colours.
 */
import { Tap } from './lib/tap.mjs';
import { browserMissing, withDaemon, launch, open, screenshot } from './lib/harness.mjs';
import { seedHostile, HOSTILE, HOSTILE_PHASE } from './lib/seed.mjs';

const tap = new Tap(21);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

async function noMarkup(page, where) {
	const r = await page.evaluate(() => ({
		xss: window.__xss,
		imgs: document.querySelectorAll('main img').length,
		bold: document.querySelectorAll('main b').length,
		scripts: document.querySelectorAll('main script').length,
	}));
	tap.ok(r.xss === undefined && r.imgs === 0 && r.bold === 0 && r.scripts === 0, `${where}: hostile strings created no element and ran nothing`, r);
}

await withDaemon(tap, async (d) => {
	const job = await seedHostile(d);
	const b = await launch();
	try {
		const page = await b.page();
		const apiCalls = [];
		page.on('request', (r) => {
			if (r.url().includes('/api/v1/'))
				apiCalls.push(Date.now());
		});

		await open(page, d.base, 'jobs?state=all');
		tap.ok((await page.textContent('[data-testid=jobs]')).includes(HOSTILE), 'jobs list: the hostile name shows as text');
		await noMarkup(page, 'jobs list');

		await open(page, d.base, `jobs/${job.id}`);
		tap.equal(await page.textContent('[data-testid=job-title]'), HOSTILE, 'job page: the hostile name is the title, as text');
		const body = await page.textContent('main');
		tap.ok(body.includes('</td><img src=x onerror=window.__xss=3>'), 'job page: hostile params show as text');
		tap.ok(body.includes(HOSTILE_PHASE), 'job page: a hostile phase name shows as text');
		await page.hover('[data-chart=throughput] .u-over');
		await noMarkup(page, 'job page');
		await screenshot(page, 'hostile-job');

		await open(page, d.base, 'workloads');
		tap.ok((await page.textContent('[data-testid=workloads]')).includes(HOSTILE), 'workloads list: the hostile name shows as text');
		await noMarkup(page, 'workloads list');
		await page.click('[data-testid=workloads] a');
		await page.waitForSelector('main[data-loaded="true"] [data-testid=workload-title]');
		tap.equal(await page.textContent('[data-testid=workload-title]'), HOSTILE, 'workload page: the hostile name is the title, as text');
		const cmds = await page.$$eval('[data-testid=command]', (p) => p.map((x) => x.textContent));
		const line = cmds.find((c) => c.startsWith('eval "$(curl -s'));
		tap.ok(line && line.includes('recommend?workload=' + encodeURIComponent(HOSTILE) + '&'),
			'workload page: the prologue line carries the name URL-encoded', cmds);
		/* The line works: its URL answers with the name quoted for the shell. */
		const url = line && /curl -s '([^']+)'/.exec(line)?.[1];
		const env = url ? await (await fetch(url)).text() : '';
		tap.ok(env.includes(`export DLPROF_WORKLOAD='${HOSTILE}'`), 'the prologue URL answers with the hostile name quoted', env);
		await noMarkup(page, 'workload page');
		tap.ok(page.problems.length === 0, 'hostile pages: no console errors', page.problems);

		/* Live: new samples reach the chart without a reload. */
		await open(page, d.base, `jobs/${job.id}`);
		const before = Number(await page.getAttribute('[data-chart=throughput]', 'data-points'));
		const now = Math.floor(Date.now() / 1000);
		await d.api('POST', `jobs/${job.id}/metrics`, {
			samples: [1, 2, 3].map((k) => ({ t: now + k, name: 'samples_per_s', value: 150 + k })),
		});
		const grew = await page.waitForFunction((n) => Number(document.querySelector('[data-chart=throughput]').dataset.points) > n,
			before, { timeout: 15000 }).then(() => true, () => false);
		tap.ok(grew, 'job page: new samples appear without a reload', { before });

		/* Hidden tab: no polling; visible again: polling resumes at once. */
		const setVisibility = (state) => page.evaluate((s) => {
			Object.defineProperty(document, 'visibilityState', { value: s, configurable: true });
			Object.defineProperty(document, 'hidden', { value: s === 'hidden', configurable: true });
			document.dispatchEvent(new Event('visibilitychange'));
		}, state);
		await setVisibility('hidden');
		tap.equal(await page.getAttribute('html', 'data-polling'), 'off', 'hidden tab: polling is off');
		await page.waitForTimeout(500); /* a request already in flight may still land */
		const mark = apiCalls.length;
		await page.waitForTimeout(4500); /* more than two refresh periods of the job page */
		tap.equal(apiCalls.length - mark, 0, 'hidden tab: no API request for two refresh periods');
		await setVisibility('visible');
		const resumed = await page.waitForFunction(() => document.documentElement.dataset.polling === 'on', null, { timeout: 10000 })
			.then(() => true, () => false);
		tap.ok(resumed && apiCalls.length > mark, 'visible again: polling resumes', { resumed, calls: apiCalls.length - mark });

		/* Weight: what the browser loaded, data left out. */
		const weight = await page.evaluate(() => {
			const nav = performance.getEntriesByType('navigation')[0];
			const res = performance.getEntriesByType('resource').filter((r) => !r.name.includes('/api/'));
			return { total: nav.decodedBodySize + res.reduce((n, r) => n + r.decodedBodySize, 0), files: res.length + 1 };
		});
		tap.ok(weight.total > 0 && weight.total < 200 * 1024, `the page and its scripts: ${weight.total} bytes in ${weight.files} files (< 200 KB)`, weight);

		/* Dark and light differ, and the charts follow. */
		const colours = async () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
		await page.emulateMedia({ colorScheme: 'light' });
		const light = await colours();
		await page.emulateMedia({ colorScheme: 'dark' });
		const dark = await colours();
		tap.ok(light !== dark, 'prefers-color-scheme switches the colours', { light, dark });
		tap.ok(page.problems.length === 0, 'live, hidden and theme changes: no console errors', page.problems);
	} finally {
		await b.close();
	}
});
