#!/usr/bin/env node
/*
 * bench/web/run.mjs: the dashboard's page weight and load time, the pages
 * of this tree against the pages before it (a git ref's web/), in one run
 * on one daemon's data, and the heatmap's draw time.
 *
 * One store is seeded through the daemon's ingest route with the browser
 * tests' scale history (tests/browser/lib/history.mjs): 50 running jobs
 * (real sleeping processes the sampler samples) of 8 threads with an hour
 * of history, and one job of 256 threads.  Then, per repetition, the
 * daemon is started on that store once with each web root (baseline and
 * current, alternating) and headless chromium opens each page in a fresh
 * browser context (nothing cached): the time from navigation to the
 * page's first refresh drawn (main[data-loaded]), the bytes of the page's
 * own files (HTML, JS, CSS, decoded) and of its API answers, and the
 * requests; then the same page again in that context (warm).  Medians of
 * the repetitions, their range beside, and the ratio current/baseline of
 * the medians.  The section between the bench/web markers of
 * bench/RESULTS.md is rewritten; the rest is kept.
 *
 * Usage: bench/web/run.mjs [--daemon PATH] [--baseline REF] [--reps N]
 *        [--jobs N] [--results FILE] [--no-write]
 * The daemon defaults to build/bench, then build/release (make a release
 * build first: bench/run builds build/bench); the baseline to the commit
 * this branch left main at.  Needs playwright-core (npm ci --prefix
 * tests/browser) and Debian's chromium; run it under the machine's lock.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
process.env.DLPROF_SRCDIR = SRC;

const args = process.argv.slice(2);
const opt = (name, dflt) => {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : dflt;
};
const reps = Number(opt('--reps', 5));
const nJobs = Number(opt('--jobs', 50));
const results = opt('--results', path.join(SRC, 'bench', 'RESULTS.md'));
const write = !args.includes('--no-write');

function firstExisting(...files) {
	return files.find((f) => f && fs.existsSync(f));
}

const daemon = path.resolve(firstExisting(opt('--daemon'), path.join(SRC, 'build/bench/daemon/dlprofd'),
	path.join(SRC, 'build/release/daemon/dlprofd')) || '');
if (!fs.existsSync(daemon)) {
	console.error('bench/web: no release daemon: run bench/run once (it builds build/bench) or give --daemon');
	process.exit(2);
}
const git = (...a) => execFileSync('git', ['-C', SRC, ...a], { encoding: 'utf8' }).trim();
const baseline = opt('--baseline') || git('merge-base', 'HEAD', 'main');
if (baseline === git('rev-parse', 'HEAD') && !opt('--baseline')) {
	console.error('bench/web: HEAD is where it left main: name the pages to compare with --baseline REF');
	process.exit(2);
}

/* The harness finds the daemon under DLPROF_BUILDDIR. */
process.env.DLPROF_BUILDDIR = path.dirname(path.dirname(daemon));
const { Daemon } = await import(path.join(SRC, 'tests/browser/lib/harness.mjs'));
const { seedScale } = await import(path.join(SRC, 'tests/browser/lib/history.mjs'));
const { chromium } = await import(path.join(SRC, 'tests/browser/node_modules/playwright-core/index.mjs'));

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'dlprof-bench-web-'));
const oldWeb = path.join(work, 'baseline');
fs.mkdirSync(oldWeb);
const tar = spawnSync('sh', ['-c', `git -C '${SRC}' archive '${baseline}' web | tar -x -C '${oldWeb}'`]);
if (tar.status !== 0) {
	console.error('bench/web: git archive ' + baseline + ': ' + tar.stderr);
	process.exit(2);
}
const roots = { baseline: path.join(oldWeb, 'web'), current: path.join(SRC, 'web') };
const db = path.join(work, 'bench.db');
const FLAGS = ['--db', db, '--ingest-rate', '100000', '--ingest-burst', '100000'];

/* A daemon on the shared store with one web root (its own directory keeps the rest). */
async function start(root) {
	const d = new Daemon([...FLAGS, '--web-root', root]);
	await d.start(60000);
	return d;
}

const log = (m) => console.error('bench/web: ' + m);
log(`daemon ${daemon}, baseline pages ${baseline.slice(0, 12)}, ${reps} repetitions`);
let d = await start(roots.current);
const t0 = Date.now();
const seeded = await seedScale(d, { jobs: nJobs, threads: 8, points: 360, big: 256 });
log(`seeded ${nJobs} jobs x 8 threads and one of 256, an hour each, in ${Date.now() - t0} ms`);
await d.stop();

const PAGES = [
	['node', 'node, 51 running jobs'],
	['jobs', 'jobs list'],
	[`jobs/${seeded.jobs[1].id}`, 'job of 8 threads, an hour'],
	[`jobs/${seeded.big.id}`, 'job of 256 threads, an hour'],
	[`compare?jobs=${seeded.jobs.slice(0, 4).map((j) => j.id).join(',')}`, 'compare 4 jobs'],
];

/* One page in a fresh context: cold, then again warm. */
async function measure(browser, base, route) {
	const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
	const page = await ctx.newPage();
	const one = async () => {
		await page.goto(base + '#/' + route);
		await page.waitForSelector('main[data-loaded]', { timeout: 60000 });
		return page.evaluate(() => {
			const res = performance.getEntriesByType('resource');
			const nav = performance.getEntriesByType('navigation')[0];
			const api = res.filter((r) => r.name.includes('/api/'));
			const own = res.filter((r) => !r.name.includes('/api/'));
			const heat = document.querySelector('[data-chart=threads]');
			return {
				ms: performance.now(),
				loaded: document.querySelector('main').dataset.loaded,
				page: (nav ? nav.decodedBodySize : 0) + own.reduce((n, r) => n + r.decodedBodySize, 0),
				files: own.length + 1,
				api: api.reduce((n, r) => n + r.decodedBodySize, 0),
				requests: api.length,
				draw: heat && heat.dataset.drawMs ? Number(heat.dataset.drawMs) : null,
			};
		});
	};
	const cold = await one();
	/* The same page again: the HTTP cache may keep the files; a new navigation runs the page afresh. */
	await page.goto('about:blank');
	const warm = await one();
	await ctx.close();
	return { cold, warm };
}

const got = {};
const browser = await chromium.launch({ executablePath: process.env.DLPROF_CHROMIUM || '/usr/bin/chromium',
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
try {
	for (let r = 0; r < reps; r++)
		for (const variant of r % 2 ? ['current', 'baseline'] : ['baseline', 'current']) {
			d = await start(roots[variant]);
			for (const [route] of PAGES) {
				if (variant === 'baseline' && route.startsWith('compare'))
					continue;
				const m = await measure(browser, d.base, route);
				((got[route] ??= {})[variant] ??= []).push(m);
			}
			await d.stop();
			log(`repetition ${r + 1}, ${variant}: done`);
		}
} finally {
	await browser.close();
	seeded.stop();
	fs.rmSync(work, { recursive: true, force: true });
}

const med = (xs) => {
	const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
	return v.length ? (v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2) : NaN;
};
const fmtMs = (xs) => `${med(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
const kb = (x) => (x / 1024).toFixed(1);
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? (a / b).toFixed(2) + '×' : '–');

const rows = [];
for (const [route, label] of PAGES) {
	const g = got[route] || {};
	for (const variant of ['baseline', 'current']) {
		const m = g[variant];
		if (!m)
			continue;
		const cold = m.map((x) => x.cold.ms), warm = m.map((x) => x.warm.ms);
		const draws = m.map((x) => x.cold.draw).filter((x) => x !== null);
		rows.push(`| ${label} | ${variant} | ${fmtMs(cold)} | ${fmtMs(warm)} | ${kb(med(m.map((x) => x.cold.page)))} in ${med(m.map((x) => x.cold.files))} |`
			+ ` ${kb(med(m.map((x) => x.cold.api)))} in ${med(m.map((x) => x.cold.requests))} | ${draws.length ? fmtMs(draws) : '–'} |`
			+ ` ${m.every((x) => x.cold.loaded === 'true') ? 'yes' : 'no'} |`);
	}
	if (g.baseline && g.current)
		rows.push(`| ${label} | current / baseline | ${ratio(med(g.current.map((x) => x.cold.ms)), med(g.baseline.map((x) => x.cold.ms)))} |`
			+ ` ${ratio(med(g.current.map((x) => x.warm.ms)), med(g.baseline.map((x) => x.warm.ms)))} |`
			+ ` ${ratio(med(g.current.map((x) => x.cold.page)), med(g.baseline.map((x) => x.cold.page)))} |`
			+ ` ${ratio(med(g.current.map((x) => x.cold.api)), med(g.baseline.map((x) => x.cold.api)))} | | |`);
}

const cmd = `bench/web/run.mjs --daemon ${path.relative(SRC, daemon)} --baseline ${baseline.slice(0, 12)} --reps ${reps} --jobs ${nJobs}`;
const section = [
	'<!-- bench/web begin -->',
	'## Dashboard pages: weight and load time (bench/web)',
	'',
	`Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.hostname()} (${os.cpus().length} CPUs, ${os.cpus()[0]?.model || '?'}),`
	+ ` ${reps} repetitions, headless Debian chromium at 1280×900; daemon \`${path.relative(SRC, daemon)}\` on one store of`
	+ ` ${nJobs} running jobs × 8 threads and one of 256, an hour of history each (tests/browser/lib/history.mjs);`
	+ ` baseline: the pages of \`${baseline.slice(0, 12)}\`, current: this tree's. Command:`,
	'',
	'```sh',
	cmd,
	'```',
	'',
	'Load: milliseconds from navigation to the page\'s first refresh drawn, median (min–max): cold in a fresh browser'
	+ ' context, warm when opened again in it. Page: KiB of the page\'s own files (HTML, JS, CSS, decoded) in files;'
	+ ' API: KiB of the JSON its first refresh read, in requests. Heatmap: milliseconds to draw the canvas (one'
	+ ' putImageData of threads × screen columns). Drawn: every load reached its first refresh without an error.',
	'',
	'| page | pages | load, cold (ms) | load, warm (ms) | page (KiB) | API (KiB) | heatmap (ms) | drawn |',
	'|---|---|---|---|---|---|---|---|',
	...rows,
	'<!-- bench/web end -->',
].join('\n');
console.log(section);
if (write) {
	let text = fs.existsSync(results) ? fs.readFileSync(results, 'utf8') : '';
	const re = /<!-- bench\/web begin -->[\s\S]*?<!-- bench\/web end -->/;
	text = re.test(text) ? text.replace(re, section) : text.replace(/\n*$/, '\n\n') + section + '\n';
	fs.writeFileSync(results, text);
	log('wrote ' + path.relative(SRC, results));
}
