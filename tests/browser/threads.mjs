/*
 * A job page's heatmap, story and downloads in headless chromium, against a
 * real process the daemon samples: python threads named by the kernel, one
 * spinning, two waiting, one half busy.  The heatmap draws each thread by
 * name with the spinning one hottest; the keys walk its cells and read
 * them out (thread, CPU, local time and UTC); its table lists every
 * thread; its CSV and JSON hold every cell the API gave.  Every chart has
 * its numbers as a table and as CSV and JSON with one click, and the
 * arrow keys read its points.  The story lists the job's start and config
 * with why; the record link downloads the series shown.  Dark and 390 px
 * keep working.  Screenshots go to $DLPROF_BUILDDIR/tests/browser/screenshots/.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { Tap } from './lib/tap.mjs';
import { browserMissing, withDaemon, launch, open, screenshot } from './lib/harness.mjs';

const tap = new Tap(22);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

const PY = `
import ctypes, threading, time
libc = ctypes.CDLL(None)
def run(name, duty):
    libc.prctl(15, name.encode(), 0, 0, 0)
    while True:
        t = time.time()
        while time.time() - t < 0.1 * duty:
            pass
        time.sleep(0.1 * (1 - duty) + 1e-4)
for name, duty in (("spin-worker", 1.0), ("half-worker", 0.5), ("pool-wait-0", 0.0), ("pool-wait-1", 0.0)):
    threading.Thread(target=run, args=(name, duty), daemon=True).start()
print("ready", flush=True)
time.sleep(300)
`;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* What a click on a download control saves: its file name and text. */
async function downloaded(page, selector) {
	const [dl] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
	const file = await dl.path();
	return { name: dl.suggestedFilename(), text: fs.readFileSync(file, 'utf8') };
}

/*
 * How far row r's drawn cells are from the idle colour (--heat0), on
 * average: the heat the canvas shows for that thread, whatever the theme.
 * Rows are 16 px under an 8 px strip and a 4 px gap while they fit;
 * the left quarter (the names) is left out.
 */
async function rowHeat(page, r) {
	return page.$eval('[data-chart=threads]', (c, row) => {
		const dpr = window.devicePixelRatio || 1, n = Number(c.dataset.threads);
		const rowH = Math.max(2, Math.min(16, Math.floor(560 / n)));
		const hex = getComputedStyle(document.documentElement).getPropertyValue('--heat0').trim();
		const idle = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
		const y0 = Math.round((12 + row * rowH + 2) * dpr), y1 = Math.round((12 + (row + 1) * rowH - 2) * dpr);
		const x0 = Math.round(c.width / 4);
		/* Read from a copy: reading the page's own canvas again and again makes chromium warn. */
		const copy = document.createElement('canvas');
		copy.width = c.width;
		copy.height = c.height;
		const cx = copy.getContext('2d', { willReadFrequently: true });
		cx.drawImage(c, 0, 0);
		const px = cx.getImageData(x0, y0, c.width - x0, y1 - y0).data;
		let sum = 0, cells = 0;
		for (let i = 0; i < px.length; i += 4)
			if (px[i + 3] === 255) {
				sum += Math.hypot(px[i] - idle[0], px[i + 1] - idle[1], px[i + 2] - idle[2]);
				cells++;
			}
		return cells ? sum / cells : 0;
	}, r);
}

await withDaemon(tap, async (d) => {
	const py = spawn('python3', ['-c', PY], { stdio: ['ignore', 'pipe', 'inherit'] });
	const b = await launch({ acceptDownloads: true });
	try {
		await new Promise((r) => py.stdout.once('data', r));
		const job = await d.api('POST', 'jobs', { workload: 'threads-page', pid: py.pid });
		/* Phases the job reports meanwhile, so each column has one in force. */
		for (let k = 0; k < 6; k++) {
			const t = Date.now() / 1000;
			await d.api('POST', `jobs/${job.id}/metrics`, { samples: [
				{ t, name: 'samples_per_s', value: 500 + k }, { t, name: 'step_time_s', value: 0.1 },
				{ t, name: 'phase_time_s', phase: 'data', value: 0.03 }, { t, name: 'phase_time_s', phase: 'compute', value: 0.07 }] });
			await sleep(500);
		}
		/* A few store intervals read, whatever the machine's load: the first read of a thread is its baseline. */
		let api;
		for (let k = 0; k < 100; k++) {
			api = await d.api('GET', `jobs/${job.id}/threads`);
			if (api.t.length >= 4 && api.threads.some((t) => t.name === 'spin-worker'))
				break;
			await sleep(200);
		}
		const page = await b.page();
		page.setDefaultTimeout(15000);
		await open(page, d.base, `jobs/${job.id}`);
		await page.waitForSelector('[data-chart=threads][data-columns]');

		const shown = await page.$eval('[data-chart=threads]', (c) => ({ threads: Number(c.dataset.threads), columns: Number(c.dataset.columns) }));
		tap.ok(shown.threads === api.threads.length && shown.threads >= 5 && shown.columns >= 3,
			'heatmap: every thread the API has, over its columns', { shown, api: api.threads.length });
		const names = api.threads.map((t) => t.name);
		tap.ok(['spin-worker', 'half-worker', 'pool-wait-0', 'pool-wait-1'].every((n) => names.includes(n)),
			'heatmap: the threads by the names the kernel gave them', names);
		const row = (n) => api.threads.find((t) => t.name === n);
		tap.ok(row('spin-worker').mean > 3 * Math.max(row('pool-wait-0').mean, 0.01) && row('spin-worker').mean > row('half-worker').mean,
			'heatmap: the spinning thread uses more CPU than the half-busy one, the waiting ones next to none',
			api.threads.map((t) => [t.name, t.mean]));
		const spinRow = api.threads.findIndex((t) => t.name === 'spin-worker');
		const waitRow = api.threads.findIndex((t) => t.name === 'pool-wait-0');
		const heat = [await rowHeat(page, spinRow), await rowHeat(page, waitRow)];
		tap.ok(heat[0] > 100 && heat[1] < 25, 'heatmap: the spinning thread is drawn hot, the waiting one idle', heat);

		/* The keys: focus, then walk to the spinning thread's row. */
		await page.focus('[data-chart=threads]');
		await page.keyboard.press('End');
		for (let k = 0; k < spinRow; k++)
			await page.keyboard.press('ArrowDown');
		await page.keyboard.press('ArrowLeft');
		const said = await page.textContent('[data-testid=threads] [data-testid=chart-said]');
		tap.ok(/^spin-worker \(tid \d+, pid \d+\): [\d.]+ cores, \d\d:\d\d:\d\d–\d\d:\d\d:\d\d \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)/.test(said),
			'heatmap: the arrow keys read a cell: thread, CPU, local times and UTC', said);
		await page.keyboard.press('Escape');
		/* Point at the middle of the spinning thread's newest cell. */
		const at = await page.$eval('[data-chart=threads]', (c, row) => ({ x: c.clientWidth - 1, y: 12 + row * 16 + 8 }), spinRow);
		let tip = '';
		for (let x = at.x; x > at.x / 4 && !tip; x -= 4) {
			await page.mouse.move(0, 0);
			await page.hover('[data-chart=threads]', { position: { x, y: at.y } });
			tip = await page.isVisible('.heat-tip') ? await page.textContent('.heat-tip') : '';
		}
		tap.ok(/^spin-worker \(tid \d+, pid \d+\): [\d.]+ cores/.test(tip), 'heatmap: pointing at a cell names it', tip);
		await screenshot(page, 'threads-job-1280-light');

		/* Its table and downloads. */
		await page.click('[data-testid=threads] summary');
		await page.waitForSelector('[data-testid=threads] .data-table');
		const rows = await page.$$eval('[data-testid=threads] .data-table tbody tr', (tr) => tr.map((r) => r.firstChild.textContent));
		tap.equal(rows.length, api.threads.length, 'heatmap table: one row per thread');
		const csv = await downloaded(page, '[data-testid=threads] [data-testid=export-csv]');
		const cells = api.threads.reduce((n, t) => n + t.values.filter((v) => v !== null).length, 0);
		const lines = csv.text.trim().split('\n');
		tap.ok(/^dlprofd-threads-\d{8}-\d{4}\.csv$/.test(csv.name) && lines[0] === 'pid,tid,name,t_unix,time_utc,cores'
			&& lines.length - 1 >= cells, 'heatmap CSV: one row per cell the API gave', { name: csv.name, rows: lines.length - 1, cells });
		const json = JSON.parse((await downloaded(page, '[data-testid=threads] [data-testid=export-json]')).text);
		tap.ok(json.threads.length === api.threads.length && json.unit === 'cores', 'heatmap JSON: the answer the heatmap drew');

		/* Every chart: table, CSV, JSON, keys.  The CPU panel, for one. */
		/* The chart follows the sampler live: what it drew is read just before and after each. */
		const drawn = async () => Number(await page.getAttribute('[data-chart=cpu]', 'data-points'));
		let before = await drawn();
		await page.click('[data-testid=panel-cpu] summary');
		await page.waitForSelector('[data-testid=panel-cpu] .data-table');
		const tableCells = await page.$$eval('[data-testid=panel-cpu] .data-table tbody td', (td) => td.filter((x) => x.textContent !== '–').length);
		let after = await drawn();
		tap.ok(tableCells >= before && tableCells <= after && before > 0, 'CPU chart: its table holds every point drawn', { tableCells, before, after });
		const ccsv = await downloaded(page, '[data-testid=panel-cpu] [data-testid=export-csv]');
		const header = ccsv.text.split('\n')[0];
		tap.ok(header.startsWith('t_unix,time_utc,cores used') && ccsv.text.trim().split('\n').length > 2, 'CPU chart: CSV with a column per series', header);
		before = await drawn();
		const cjson = JSON.parse((await downloaded(page, '[data-testid=panel-cpu] [data-testid=export-json]')).text);
		after = await drawn();
		const jsonPoints = cjson.series.reduce((n, s) => n + s.points.length, 0);
		tap.ok(jsonPoints >= before && jsonPoints <= after, 'CPU chart: JSON with every point drawn', { jsonPoints, before, after });
		await page.focus('[data-chart=throughput]');
		await page.keyboard.press('Home');
		const tpSaid = await page.textContent('[data-chart=throughput] ~ [data-testid=chart-said]');
		tap.ok(/^\d\d:\d\d:\d\d \(\d{4}-\d\d-\d\d [\d:]+ UTC\): samples\/s 50\d/.test(tpSaid), 'throughput chart: Home reads its first point', tpSaid);
		await page.keyboard.press('ArrowRight');
		const tpNext = await page.textContent('[data-chart=throughput] ~ [data-testid=chart-said]');
		tap.ok(tpNext !== tpSaid && /samples\/s 50\d/.test(tpNext), 'throughput chart: the right arrow reads the next', tpNext);

		/* The story and the record. */
		const story = await page.$$eval('[data-testid=story-events] li', (li) => li.map((x) => x.dataset.kind + ': ' + x.textContent));
		tap.ok(story[0].startsWith('started') && /started \(registered, pid \d+\)/.test(story[0]) && story.some((s) => /^config: .* \((exploring|the best|settled)/.test(s)),
			'story: started, then the config and why', story);
		const hovered = await page.getAttribute('[data-testid=story-events] li time', 'title');
		tap.ok(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/.test(hovered), 'story: a time shows its UTC on hover', hovered);
		const rec = await downloaded(page, '[data-testid=record-json]');
		const doc = JSON.parse(rec.text);
		tap.ok(rec.name === `dlprofd-job-${job.id}.json` && doc.job.id === job.id && doc.timeline[0].kind === 'started'
			&& doc.series.some((s) => s.name === 'samples_per_s') && doc.series.some((s) => s.label === 'spin-worker'),
			'record: one download with the series shown, the threads named, the story', { name: rec.name, series: doc.series.length });
		tap.ok(page.problems.length === 0, 'job page with threads: no console errors', page.problems);

		await page.emulateMedia({ colorScheme: 'dark' });
		await page.setViewportSize({ width: 390, height: 900 });
		await open(page, d.base, `jobs/${job.id}`);
		await page.waitForSelector('[data-chart=threads][data-columns]');
		const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
		tap.ok(overflow <= 1, 'job page with threads at 390 px, dark: no sideways scrolling', { overflow });
		const dark = [await rowHeat(page, spinRow), await rowHeat(page, waitRow)];
		tap.ok(dark[0] > 100 && dark[1] < 25, 'heatmap in the dark: the spinning thread hot, the waiting one idle, in the dark ramp', dark);
		const shot = await screenshot(page, 'threads-job-390-dark');
		await page.locator('[data-testid=threads]').screenshot({ path: shot.replace('threads-job-390-dark', 'threads-card-390-dark') });
		tap.ok(page.problems.length === 0, 'dark, narrow: no console errors', page.problems);
	} finally {
		await b.close();
		py.kill();
	}
}, ['--interval', '0.5', '--store-interval', '1']);
