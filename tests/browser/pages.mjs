/*
 * The dashboard in headless chromium against the built daemon fed real data
 * through the API: every page loads without console errors at 1280 px and
 * at phone width, light and dark; the charts draw the points that were
 * sent; the config timeline shows the trials; navigation by links and by
 * the back button works; empty states show the command to run.
 * Screenshots go to $DLPROF_BUILDDIR/tests/browser/screenshots/.
 */
import { Tap } from './lib/tap.mjs';
import { browserMissing, withDaemon, launch, open, screenshot } from './lib/harness.mjs';
import { seed } from './lib/seed.mjs';

const tap = new Tap(65);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

/* Points a chart says it drew, and whether its canvas has ink of its first series colour. */
async function chartState(page, name) {
	return page.evaluate((sel) => {
		const el = document.querySelector(`[data-chart="${sel}"]`);
		if (!el)
			return { found: false };
		const canvas = el.querySelector('canvas');
		let ink = 0;
		if (canvas) {
			const cs = getComputedStyle(document.documentElement);
			const hex = cs.getPropertyValue('--c0').trim();
			const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
			const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
			for (let i = 0; i < px.length; i += 4)
				if (px[i + 3] > 200 && Math.abs(px[i] - want[0]) < 24 && Math.abs(px[i + 1] - want[1]) < 24 && Math.abs(px[i + 2] - want[2]) < 24)
					ink++;
		}
		return { found: true, points: Number(el.dataset.points || 0), canvas: !!canvas, ink };
	}, name);
}

function clean(page, what) {
	return tap.ok(page.problems.length === 0, `${what}: no console errors`, page.problems);
}

await withDaemon(tap, async (d) => {
	const b = await launch();
	try {
		const page = await b.page();
		page.setDefaultTimeout(10000);

		/*
		 * A fresh daemon: empty states say what to run.  The sampler may
		 * already have found Slurm jobs of this machine; then there is no
		 * empty state to see.
		 */
		const found = (await d.api('GET', 'jobs?state=all')).jobs.length;
		if (found) {
			tap.skip('no jobs: the empty state gives the curl command for this daemon', `${found} jobs discovered on this machine`);
		} else {
			await open(page, d.base, 'jobs');
			const emptyJobs = await page.textContent('[data-testid=empty]');
			tap.ok(/No jobs yet/.test(emptyJobs) && /curl -s -X POST/.test(emptyJobs) && emptyJobs.includes(d.base.replace(/\/$/, '') + '/api/v1/jobs'),
				'no jobs: the empty state gives the curl command for this daemon', emptyJobs);
			await screenshot(page, 'empty-jobs');
			clean(page, 'empty jobs page');
		}
		const learned = (await d.api('GET', 'workloads')).workloads.length;
		if (learned) {
			tap.skip('no workloads: the empty state gives the prologue line', `${learned} workloads discovered`);
		} else {
			await open(page, d.base, 'workloads');
			const emptyWl = await page.textContent('[data-testid=empty]');
			tap.ok(/No workloads yet/.test(emptyWl) && /format=env/.test(emptyWl), 'no workloads: the empty state gives the prologue line', emptyWl);
			clean(page, 'empty workloads page');
		}

		const data = await seed(d);
		const lstm = await d.api('GET', `jobs/${data.lstm.id}`);
		const trialConfigs = new Set((lstm.trials || []).map((t) => JSON.stringify(t.config)));
		tap.diag(`lstm job ${data.lstm.id}: ${lstm.trials?.length ?? 0} trials, ${trialConfigs.size} configs, phases ${JSON.stringify(lstm.phases)}`);

		const routes = [
			['node', 'node'],
			['jobs', 'jobs-running'],
			['jobs?state=all', 'jobs-all'],
			[`jobs/${data.lstm.id}`, 'job-phases'],
			[`jobs/${data.resnet.id}`, 'job-ended'],
			[`jobs/${data.silent.id}`, 'job-no-data'],
			['workloads', 'workloads'],
			['workloads/lstm-train', 'workload-lstm'],
		];
		for (const [scheme, width] of [['light', 1280], ['dark', 390]]) {
			await page.emulateMedia({ colorScheme: scheme });
			await page.setViewportSize({ width, height: 900 });
			for (const [route, name] of routes) {
				await open(page, d.base, route);
				await page.waitForTimeout(100); /* let ResizeObserver settle before the picture */
				await screenshot(page, `${name}-${width}-${scheme}`);
				clean(page, `${route} at ${width} px, ${scheme}`);
				const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
				tap.ok(overflow <= 1, `${route} at ${width} px: no sideways scrolling`, { overflow });
			}
		}
		await page.setViewportSize({ width: 1280, height: 900 });
		await page.emulateMedia({ colorScheme: 'light' });

		/* The job with phases: every point sent is drawn, and the timeline shows the trials. */
		const t0 = Date.now();
		await open(page, d.base, `jobs/${data.lstm.id}`);
		tap.diag(`job page with ${data.lstm.points} points ready after ${Date.now() - t0} ms`);
		tap.diag(`latest of the job: ${Object.keys((await d.api('GET', `jobs/${data.lstm.id}`)).latest || {}).join(' ')}`);
		tap.equal(await page.textContent('[data-testid=job-title]'), 'lstm-train', 'job page: the workload is the title');
		for (const chart of ['throughput', 'step', 'loss']) {
			const st = await chartState(page, chart);
			tap.equal(st.points, data.lstm.points, `job page: the ${chart} chart has the ${data.lstm.points} points sent`);
			tap.ok(st.canvas && st.ink > 50, `job page: the ${chart} chart is drawn`, st);
		}
		const ph = await chartState(page, 'phases');
		tap.equal(ph.points, 2 * data.lstm.points, 'job page: time per phase drawn for both phases');
		const chips = await page.$$eval('[data-testid=timeline-legend] li', (li) => li.map((x) => x.textContent));
		if (trialConfigs.size)
			tap.ok(chips.length >= 1 && chips.length <= trialConfigs.size,
				'job page: the timeline legend names the configs tried', { chips, trialConfigs: [...trialConfigs] });
		else
			tap.skip('job page: the timeline legend names the configs tried', 'the tuner opened no trials');
		const pairs = new Set((lstm.trials || []).map((t) => `${t.phase}\n${JSON.stringify(t.config)}`));
		const rows = await page.$$eval('[data-testid=configs-tried] > .table-wrap tbody tr', (tr) => tr.length).catch(() => 0);
		tap.equal(rows, pairs.size, 'job page: one row per phase and config tried');
		await page.click('[data-testid=configs-tried] summary').catch(() => null);
		const trialRows = await page.$$eval('[data-testid=configs-tried] details tbody tr', (tr) => tr.length).catch(() => 0);
		tap.equal(trialRows, Math.min(100, lstm.trials?.length ?? 0), 'job page: every trial listed (the latest 100)');

		/* The ended job without phases and with a handful of points. */
		await open(page, d.base, `jobs/${data.resnet.id}`);
		const st = await chartState(page, 'throughput');
		tap.equal(st.points, 5, 'ended job: its 5 points are drawn');
		tap.ok(/ended/.test(await page.textContent('.page-head')), 'ended job: it says ended');
		tap.equal(await page.$('[data-chart=loss]') && await page.isVisible('[data-chart=loss]'), false, 'ended job: no loss chart when no loss was reported');
		/* Energy: a figure, or why there is none (this machine may lack RAPL), never a bare 0. */
		const energy = await page.textContent('[data-testid=energy]');
		tap.ok(/CPU/.test(energy) && (/not measured: (rapl \w+: .{10,}|no CPU energy)/.test(energy) || /\d (J|kJ|kWh)/.test(energy)),
			'ended job: the energy card gives its CPU energy or why it is not measured', energy);

		/* The job that reported nothing: says how to send samples. */
		await open(page, d.base, `jobs/${data.silent.id}`);
		const silent = await page.textContent('[data-testid=empty]');
		tap.ok(/reported nothing/.test(silent) && silent.includes(`/api/v1/jobs/${data.silent.id}/metrics`), 'job without data: the empty state shows the metrics call', silent);

		/* Navigation: tabs, links, back and forward. */
		await open(page, d.base, 'node');
		await page.click('nav.tabs >> text=Jobs');
		await page.waitForSelector('main[data-loaded="true"] [data-testid=jobs] table');
		tap.ok(page.url().endsWith('#/jobs'), 'the Jobs tab opens the jobs list', page.url());
		await page.click(`[data-testid=jobs] a[href="#/jobs/${data.lstm.id}"] >> nth=0`);
		await page.waitForSelector('main[data-loaded="true"] [data-testid=job-title]');
		tap.equal(await page.textContent('[data-testid=job-title]'), 'lstm-train', 'a job link opens its page');
		await page.click('nav.tabs >> text=Workloads');
		await page.waitForSelector('main[data-loaded="true"] [data-testid=workloads]');
		await page.click('[data-testid=workloads] a[href^="#/workloads/lstm-train?"]');
		await page.waitForSelector('main[data-loaded="true"] [data-testid=workload-title]');
		tap.equal(await page.textContent('[data-testid=workload-title]'), 'lstm-train', 'a workload link opens its surface');
		const prologue = await page.$$eval('[data-testid=command]', (p) => p.map((x) => x.textContent));
		tap.ok(prologue.some((x) => x.startsWith(`eval "$(curl -s '${d.base}api/v1/recommend?workload=lstm-train&`)
			&& x.includes('batch=64') && x.endsWith(`&format=env')"`)),
			'the workload page shows the prologue line', prologue);
		const url = /curl -s '([^']+)'/.exec(prologue.find((x) => x.startsWith('eval')) || '')?.[1];
		const env = url ? await (await fetch(url)).text() : '';
		tap.ok(/^export OMP_NUM_THREADS='\d+'$/m.test(env) && env.includes("export DLPROF_WORKLOAD='lstm-train'"),
			'the prologue URL answers with the settings to export', env);
		await page.goBack();
		await page.waitForSelector('main[data-loaded="true"] [data-testid=workloads]');
		tap.ok(page.url().endsWith('#/workloads'), 'back returns to the workloads list', page.url());
		await page.goBack();
		await page.waitForSelector('main[data-loaded="true"] [data-testid=job-title]');
		tap.ok(page.url().endsWith(`#/jobs/${data.lstm.id}`), 'back again returns to the job', page.url());
		tap.ok(await page.getAttribute(`nav.tabs a[data-page=jobs]`, 'class') === 'active', 'the tab of the page shown is marked');
		clean(page, 'navigation');

		/* The workload's surface: one point per tried config with an intra_threads value. */
		await open(page, d.base, 'workloads/lstm-train');
		const w = await d.api('GET', 'workloads/lstm-train');
		const surf = await chartState(page, 'surface');
		tap.ok(surf.found && surf.points >= 1 && surf.canvas, 'the learned surface is drawn', surf);

		/* Per phase, what the best whole-job plan runs there and its evidence, as the API says (seed: phases). */
		const settings = w.phase_settings || [];
		const phaseRows = (await page.evaluate(() => [...document.querySelectorAll('.card')]
			.filter((c) => /Per-phase settings/.test(c.textContent))
			.map((c) => [...c.querySelectorAll('tbody tr')].map((r) => r.textContent))))[0] || [];
		tap.ok(settings.length > 0 && phaseRows.length === settings.length
			&& settings.every((s) => phaseRows.some((r) => r.startsWith(s.phase) && /with it|job-wide/.test(r))),
			'the workload page shows each phase\'s adopted setting with whole-job evidence', { phaseRows, settings });
		const plans = await page.evaluate(() => [...document.querySelectorAll('.card')]
			.filter((c) => /Whole-job plans measured/.test(c.textContent))
			.map((c) => c.querySelectorAll('tbody tr').length));
		tap.equal(plans[0], (w.plans || []).length, 'the workload page lists every whole-job plan measured');
		await screenshot(page, 'workload-phases');
	} finally {
		await b.close();
	}
});
