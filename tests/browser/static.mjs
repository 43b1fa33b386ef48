/*
 * Checks of the dashboard's files that need no browser: each page and what
 * it loads (the shell, then that page's modules, which load when it is
 * first opened) stay under 200 KB, nothing is loaded from another origin, no
 * script writes markup, every module import resolves, every file is
 * installed (listed in web/local.mk), and the vendored uPlot is the version
 * its note names, with its license.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Tap } from './lib/tap.mjs';
import { SRCDIR } from './lib/harness.mjs';

const WEB = path.join(SRCDIR, 'web');
const BUDGET = 200 * 1024;
const tap = new Tap(11);

function walk(dir) {
	return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
		e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]);
}

const rel = (f) => path.relative(WEB, f);
const read = (f) => fs.readFileSync(f, 'utf8');
const files = walk(WEB);
const ownJs = files.filter((f) => f.endsWith('.js') && !rel(f).startsWith('vendor/'));

/* What index.html loads, and what those modules import, transitively. */
function loaded() {
	const html = read(path.join(WEB, 'index.html'));
	const seen = new Set(['index.html']);
	const queue = [...html.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => m[1]);
	const bad = [];
	while (queue.length) {
		const ref = queue.shift();
		if (/^([a-z]+:|\/\/)/i.test(ref)) {
			if (!ref.startsWith('data:'))
				bad.push(ref);
			continue;
		}
		const f = path.normalize(ref);
		if (seen.has(f))
			continue;
		seen.add(f);
		const abs = path.join(WEB, f);
		if (!fs.existsSync(abs)) {
			bad.push(`${ref} (missing)`);
			continue;
		}
		if (f.endsWith('.js') && !f.startsWith('vendor/'))
			for (const m of read(abs).matchAll(/(?:from\s+|import\s*\(\s*)'([^']+)'/g))
				queue.push(path.join(path.dirname(f), m[1]));
	}
	return { seen, bad };
}

const { seen, bad } = loaded();
tap.ok(bad.length === 0, 'index.html and its modules load only existing same-origin files', bad);
tap.ok(seen.has('vendor/uplot/uPlot.iife.min.js') && seen.has('js/app.js'), 'the page loads uPlot and the app');

/* A module and what it imports statically (import ... from), transitively. */
function closure(start, into = new Set()) {
	if (into.has(start))
		return into;
	into.add(start);
	for (const m of read(path.join(WEB, start)).matchAll(/from\s+'([^']+)'/g))
		closure(path.normalize(path.join(path.dirname(start), m[1])), into);
	return into;
}

/* What opening each page loads: index.html's files and the shell, then the page's own modules. */
const html0 = read(path.join(WEB, 'index.html'));
const shell = new Set([...html0.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => path.normalize(m[1]))
	.filter((f) => !/^[a-z]+:/i.test(f)));
closure('js/app.js', shell);
const pages = [...read(path.join(WEB, 'js/app.js')).matchAll(/import\(\s*'([^']+)'/g)].map((m) => path.normalize(path.join('js', m[1])));
const size = (files) => [...files].reduce((n, f) => n + fs.statSync(path.join(WEB, f)).size, 0);
const weights = pages.map((p) => [p, size(closure(p, new Set(shell)))]);
tap.ok(pages.length >= 7 && weights.every(([, w]) => w < BUDGET),
	`each page and its scripts weigh under ${BUDGET} bytes (the heaviest ${Math.max(...weights.map((w) => w[1]))})`, weights);
tap.diag(`every file the dashboard may load: ${size(seen)} bytes; per page: ${weights.map(([p, w]) => `${path.basename(p)} ${w}`).join(', ')}`);

const sinks = /\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\s*\(|new Function\s*\(|setAttribute\(\s*['"]on/;
const sinky = ownJs.filter((f) => sinks.test(read(f))).map(rel);
tap.ok(sinky.length === 0, 'no script of ours writes markup or evaluates strings', sinky);

const remote = /(["'`(])(https?:)?\/\/[a-z0-9]/i;
const own = files.filter((f) => /\.(js|css|html)$/.test(f) && !rel(f).startsWith('vendor/'));
const remoteRefs = own.filter((f) => remote.test(read(f).replace(/^\s*(\/\/|\*|\/\*).*$/gm, ''))).map(rel);
tap.ok(remoteRefs.length === 0, 'no file of ours names another origin', remoteRefs);

const unresolved = [];
for (const f of ownJs)
	for (const m of read(f).matchAll(/from\s+'([^']+)'/g))
		if (!fs.existsSync(path.join(path.dirname(f), m[1])))
			unresolved.push(`${rel(f)}: ${m[1]}`);
tap.ok(unresolved.length === 0, 'every module import resolves', unresolved);

const mk = read(path.join(WEB, 'local.mk'));
const notInstalled = files.map(rel).filter((f) => f !== 'local.mk' && f !== 'vendor/uplot/README.md' && !mk.includes('web/' + f));
tap.ok(notInstalled.length === 0, 'every dashboard file is listed in web/local.mk', notInstalled);

const note = read(path.join(WEB, 'vendor/uplot/README.md'));
const version = /version \*\*(\d+\.\d+\.\d+)\*\*/.exec(note);
const head = read(path.join(WEB, 'vendor/uplot/uPlot.iife.min.js')).slice(0, 200);
tap.ok(version && head.includes(`(v${version[1]})`), 'vendored uPlot is the version its note names', { note: version && version[1], head: head.slice(0, 60) });
tap.ok(/MIT License/.test(read(path.join(WEB, 'vendor/uplot/LICENSE'))), "uPlot's license is kept beside it");

const html = read(path.join(WEB, 'index.html'));
tap.ok(/name="viewport"/.test(html) && /Content-Security-Policy/.test(html), 'index.html sets a viewport and a content security policy');
tap.ok(/prefers-color-scheme:\s*dark/.test(read(path.join(WEB, 'css/app.css'))), 'the stylesheet has a dark scheme');
tap.end();
