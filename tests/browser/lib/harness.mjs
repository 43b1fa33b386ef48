/*
 * What the browser tests share: the built daemon on an ephemeral loopback
 * port with a private database, the JSON API to feed it real data, and
 * Debian's chromium driven by playwright-core with a fresh profile.  When
 * the daemon, chromium or node_modules is missing, the test file skips
 * whole and says why; nothing here downloads a browser.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SRCDIR = process.env.DLPROF_SRCDIR || path.resolve(HERE, '../../..');
export const BUILDDIR = process.env.DLPROF_BUILDDIR || SRCDIR;
export const DAEMON = path.join(BUILDDIR, 'daemon', 'dlprofd');
export const CHROMIUM = process.env.DLPROF_CHROMIUM || '/usr/bin/chromium';
export const SHOTS = path.join(BUILDDIR, 'tests', 'browser', 'screenshots');

const SANITIZER_MARKS = ['ERROR: AddressSanitizer', 'ERROR: LeakSanitizer', 'runtime error:',
	'WARNING: ThreadSanitizer', 'SUMMARY: UndefinedBehaviorSanitizer'];
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
	'--disable-component-update', '--disable-sync', '--no-first-run'];

/* Why this machine cannot run browser tests, or null. */
export async function browserMissing() {
	if (!fs.existsSync(CHROMIUM))
		return `${CHROMIUM} not found (apt-get install chromium)`;
	try {
		await import('playwright-core');
	} catch {
		return 'playwright-core not installed (npm ci --prefix tests/browser)';
	}
	return null;
}

export function daemonMissing() {
	return fs.existsSync(DAEMON) ? null : `${DAEMON} not built`;
}

export class Daemon {
	/* args: extra flags (e.g. shorter intervals for a test). */
	constructor(args = []) {
		this.extraArgs = args;
		this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dlprof-browser-'));
		this.logText = '';
		this.proc = null;
		this.base = null;
	}

	/* Starts it and resolves once it logs its port; rejects with its log if it dies. */
	start(timeoutMs = 20000) {
		const conf = path.join(this.dir, 'none.conf');
		fs.writeFileSync(conf, '# empty: the test passes everything as flags\n');
		const args = ['--foreground', '--listen', '127.0.0.1:0', '--db', path.join(this.dir, 'dlprofd.db'),
			'--web-root', path.join(SRCDIR, 'web'), '--socket', '', '--config', conf, ...this.extraArgs];
		const env = { ...process.env, ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=1:abort_on_error=0' };
		this.proc = spawn(DAEMON, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
		const collect = (d) => { this.logText += d.toString(); };
		this.proc.stdout.on('data', collect);
		this.proc.stderr.on('data', collect);
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error(`dlprofd did not start:\n${this.logText}`)), timeoutMs);
			const check = () => {
				const m = /listening on 127\.0\.0\.1:(\d+)/.exec(this.logText);
				if (m && !this.base && this.logText.includes('started:')) {
					this.base = `http://127.0.0.1:${m[1]}/`;
					clearTimeout(timer);
					resolve(this);
				}
			};
			this.proc.stderr.on('data', check);
			this.proc.stdout.on('data', check);
			this.proc.on('exit', (code) => {
				clearTimeout(timer);
				this.exitCode = code;
				if (!this.base)
					reject(new Error(`dlprofd exited with ${code}:\n${this.logText}`));
			});
		});
	}

	/* SIGTERM and wait; resolves to the exit code (null if it had to be killed). */
	async stop(timeoutMs = 10000) {
		if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode !== null) {
			fs.rmSync(this.dir, { recursive: true, force: true });
			return this.proc ? this.proc.exitCode : null;
		}
		const exited = new Promise((r) => this.proc.once('exit', (code) => r(code)));
		this.proc.kill('SIGTERM');
		let timer;
		const code = await Promise.race([exited, new Promise((r) => { timer = setTimeout(() => r('timeout'), timeoutMs); })]);
		clearTimeout(timer);
		if (code === 'timeout') {
			this.proc.kill('SIGKILL');
			await exited;
		}
		fs.rmSync(this.dir, { recursive: true, force: true });
		return code === 'timeout' ? null : code;
	}

	/* A JSON API call; throws with the answer when the status is not 2xx. */
	async api(method, p, body) {
		const resp = await fetch(this.base + 'api/v1/' + p, {
			method,
			headers: body ? { 'Content-Type': 'application/json' } : {},
			body: body ? JSON.stringify(body) : undefined,
		});
		const text = await resp.text();
		if (!resp.ok)
			throw new Error(`${method} ${p}: ${resp.status} ${text}`);
		return text ? JSON.parse(text) : null;
	}
}

/*
 * Headless chromium with a fresh profile directory.  Returns {context,
 * close()}; every page of the context records console errors and uncaught
 * exceptions in page.problems.
 */
export async function launch(options = {}) {
	const { chromium } = await import('playwright-core');
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'dlprof-chromium-'));
	const context = await chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		args: CHROMIUM_ARGS,
		viewport: { width: 1280, height: 900 },
		colorScheme: 'light',
		...options,
	});
	context.on('page', watch);
	for (const p of context.pages())
		watch(p);
	return {
		context,
		async page() {
			const p = await context.newPage();
			watch(p);
			return p;
		},
		async close() {
			await context.close();
			fs.rmSync(profile, { recursive: true, force: true });
		},
	};
}

function watch(page) {
	if (page.problems)
		return;
	page.problems = [];
	page.on('console', (m) => {
		if (m.type() === 'error' || m.type() === 'warning')
			page.problems.push(`console ${m.type()}: ${m.text()}`);
	});
	page.on('pageerror', (e) => page.problems.push(`exception: ${e.message}`));
	page.on('requestfailed', (r) => {
		/* Polls cut short by navigation are expected; anything else is not. */
		if (!/ERR_ABORTED/.test(r.failure()?.errorText || ''))
			page.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
	});
}

/*
 * Opens a dashboard route and waits until its first refresh has drawn; a
 * refresh that failed is recorded in page.problems.
 */
export async function open(page, base, route) {
	page.problems.length = 0;
	await page.goto(base + '#/' + route);
	await page.waitForSelector('main[data-loaded]', { timeout: 15000 });
	const state = await page.getAttribute('main', 'data-loaded');
	if (state !== 'true')
		page.problems.push(`#/${route}: ${await page.textContent('main .refresh-error').catch(() => 'refresh failed')}`);
}

export async function screenshot(page, name) {
	fs.mkdirSync(SHOTS, { recursive: true });
	const file = path.join(SHOTS, name + '.png');
	await page.screenshot({ path: file, fullPage: true });
	return file;
}

/*
 * Runs body(tap, daemon) with a started daemon, skipping the file when
 * needs reports something missing; always stops the daemon.
 */
export async function withDaemon(tap, body, args = []) {
	const missing = daemonMissing();
	if (missing)
		tap.skipAll(missing);
	const d = new Daemon(args);
	try {
		await d.start();
	} catch (e) {
		tap.bail(e.message);
	}
	try {
		await body(d);
	} catch (e) {
		tap.ok(false, 'no unexpected error', e.stack || String(e));
	} finally {
		/* As tests/integration/harness.py judges every daemon: exit 0 after SIGTERM, in time, no sanitizer report. */
		const early = d.proc.exitCode !== null || d.proc.signalCode !== null;
		const code = await d.stop(30000);
		const report = SANITIZER_MARKS.find((m) => d.logText.includes(m));
		tap.ok(!early && code === 0 && !report, 'the daemon stops cleanly on SIGTERM (exit 0, no sanitizer report)',
			{ exitedBefore: early, code, report, log: d.logText.slice(-3000) });
		tap.end();
	}
}
