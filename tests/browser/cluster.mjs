/*
 * The Cluster page in headless chromium, against a real shared store: a
 * private PostgreSQL (tests/integration/pgserver.py), a daemon connected to
 * it, and trials of two nodes on two hardware classes written to it as
 * other nodes would.  The page must show each workload with its classes,
 * nodes, jobs and best config, render hostile names as text, fit 390 px,
 * and, on a daemon without cluster_store, say that the node learns alone.
 * A job with rank 0 here and rank 1 shared by another node (written to the
 * store as that node would): its page lists both ranks, the other one with
 * its node and the node that shared it, and marks it the straggler.
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { Tap } from './lib/tap.mjs';
import { browserMissing, withDaemon, launch, open, screenshot, SRCDIR } from './lib/harness.mjs';
import { HOSTILE } from './lib/seed.mjs';

const tap = new Tap(11);
const why = await browserMissing();
if (why)
	tap.skipAll(why);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Starts the private server; resolves to {info, stop()}. */
async function startPg() {
	const proc = spawn('python3', [path.join(SRCDIR, 'tests', 'integration', 'pgserver.py')],
		{ stdio: ['pipe', 'pipe', 'inherit'] });
	const line = await new Promise((resolve, reject) => {
		readline.createInterface({ input: proc.stdout }).once('line', resolve);
		proc.once('exit', (code) => reject(new Error(`pgserver.py exited with ${code}`)));
	});
	return {
		info: JSON.parse(line),
		stop: () => new Promise((resolve) => { proc.once('exit', resolve); proc.stdin.end(); }),
	};
}

/* What other nodes would push: trials of configs with their mean throughput. */
function trials(storeId, node, hwClass, workload, jobs) {
	const out = [];
	let id = 1;
	for (let j = 1; j <= jobs; j++)
		for (const [threads, mean] of [[2, 400], [4, 520], [8, 450]])
			out.push({ store_id: storeId, trial_id: id++, node, hw_class: hwClass, workload, params: '{"batch":64}',
				objective: 'throughput', phase: '', config: JSON.stringify({ intra_threads: threads }), job_id: j,
				n: 8, mean: mean + j, m2: 4, t_start: 1700000000 + id, t_end: 1700000001 + id, declared: null });
	return out;
}

function push(pg, batch, fn = 'dlprofd_push') {
	const r = spawnSync(pg.info.psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-v', `batch=${JSON.stringify(batch)}`,
		'-h', pg.info.host, '-p', String(pg.info.port), '-U', pg.info.user, '-d', 'postgres'],
	{ input: `SELECT ${fn}(:'batch'::json);\n`, encoding: 'utf8' });
	if (r.status !== 0)
		throw new Error('psql: ' + r.stderr);
}

/* Rank 0 of a 2-rank job here, its steps reported (the first batch is its warm-up); the job's id. */
async function localRank(d, ext) {
	const j = await d.api('POST', 'jobs', { workload: 'xnode-page', external_id: ext,
		rank: { rank: 0, world_size: 2, local_rank: 0, node: 'host-a', nodes: 2 } });
	for (const seq of [1, 2]) {
		const t = Date.now() / 1000, samples = [];
		for (let i = 0; i < 10; i++)
			samples.push({ t: t + i / 100, name: 'step_time_s', value: 0.5 }, { t: t + i / 100, name: 'comm_wait_s', value: 0.2 },
				{ t: t + i / 100, name: 'phase_time_s', phase: 'data', value: 0.02 });
		await d.api('POST', `jobs/${j.id}/metrics`, { samples, rank: 0, seq, stream: 'r0' });
	}
	return j.id;
}

const pg = await startPg();
try {
	await withDaemon(tap, async (d) => {
		const b = await launch();
		try {
			push(pg, trials('store-one', 'gpu-node-1', 'x86_64-epyc-64c-2numa-8gpu', 'resnet50', 2));
			push(pg, trials('store-two', 'gpu-node-2', 'x86_64-epyc-64c-2numa-8gpu', 'resnet50', 1));
			push(pg, trials('store-three', 'cpu-node-1', 'x86_64-xeon-32c-2numa-0gpu', HOSTILE, 1));
			let view = null;
			for (let i = 0; i < 100 && !(view && view.workloads.length === 2); i++) {
				view = await d.api('GET', 'cluster/workloads');
				await sleep(200);
			}
			tap.ok(view.cluster.connected && view.workloads.length === 2, 'the daemon reads both workloads from the shared store', view);

			const page = await b.page();
			page.setDefaultTimeout(10000);
			await open(page, d.base, 'cluster');
			const text = await page.textContent('[data-testid=cluster]');
			tap.ok(/connected/.test(text) && /browser-node/.test(text), 'the link card says connected, as which node', text);
			const row = await page.evaluate(() => [...document.querySelectorAll('[data-testid=cluster] tbody tr')]
				.map((tr) => [...tr.children].map((td) => td.textContent)));
			const resnet = row.find((r) => r[0] === 'resnet50');
			tap.ok(resnet && resnet[1] === 'batch=64' && resnet[2] === 'x86_64-epyc-64c-2numa-8gpu' && /intra 4/.test(resnet[3])
				&& resnet[6] === '2' && resnet[7] === '3' && resnet[8] === '9',
			'resnet50: its class, best config (intra 4), 2 nodes, 3 jobs, 9 trials', row);
			tap.ok(row.some((r) => r[0] === HOSTILE) && await page.evaluate(() => window.__xss === undefined)
				&& await page.$('main img') === null, 'a hostile workload name is shown as text', row);
			await screenshot(page, 'cluster-1280-light');
			tap.ok(page.problems.length === 0, 'cluster page: no console errors', page.problems);

			await page.emulateMedia({ colorScheme: 'dark' });
			await page.setViewportSize({ width: 390, height: 900 });
			await open(page, d.base, 'cluster');
			await screenshot(page, 'cluster-390-dark');
			const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
			tap.ok(overflow <= 1, 'cluster page at 390 px: no sideways scrolling', { overflow });

			// Rank 1 on another node, which waits least: the straggler, its data phase slow.
			const id = await localRank(d, 'run:xnode-page');
			const now = Date.now() / 1000;
			push(pg, [{ job_key: 'run:xnode-page', rank: 1, store_id: 'store-far', shared_by: 'far-node', node: 'host-b',
				world_size: 2, local_rank: 0, pid: 4242, state: 'running', joined: now, updated: now, steps: 10,
				step_s: 5, comm_s: 0.2, data_s: 2, samples_per_s: 128, cpu_cores: 1, wait_cores: 0 }], 'dlprofd_push_ranks');
			let job = null;
			for (let i = 0; i < 100 && !(job && job.ranks.length === 2); i++) {
				job = await d.api('GET', `jobs/${id}`);
				await sleep(200);
			}
			tap.ok(job.ranks.length === 2 && job.ranks[1].shared_by === 'far-node' && job.ranks_elsewhere === 0,
				'the job reads rank 1 from the shared store', job);
			await page.emulateMedia({ colorScheme: 'light' });
			await page.setViewportSize({ width: 1280, height: 900 });
			await open(page, d.base, `jobs/${id}`);
			await page.waitForSelector('[data-testid=ranks] tbody tr:nth-child(2) [data-testid=rank-shared]');
			const ranks = await page.$$eval('[data-testid=ranks] tbody tr', (trs) => trs.map((tr) => tr.textContent));
			const card = await page.textContent('[data-testid=ranks]');
			tap.ok(ranks.length === 2 && /host-a/.test(ranks[0]) && !/shared by/.test(ranks[0])
				&& /host-b/.test(ranks[1]) && /shared by far-node/.test(ranks[1]) && /Ranks: 2 of 2/.test(card)
				&& await page.$('[data-testid=ranks-elsewhere]') === null,
			'the job page lists both ranks, the other node\'s with its node and who shared it', ranks);
			await page.waitForSelector('[data-testid=verdict-straggler]');
			const marked = await page.$$eval('[data-testid=ranks] tbody tr', (trs) => trs.map((tr) => /straggler/.test(tr.textContent)));
			tap.ok(marked[0] === false && marked[1] === true, 'the rank on the other node is marked the straggler', marked);
			await screenshot(page, 'job-ranks-shared-1280-light');
			tap.ok(page.problems.length === 0, 'shared ranks job page: no console errors', page.problems);
		} finally {
			await b.close();
		}
	}, ['--cluster-store', pg.info.conninfo, '--cluster-node', 'browser-node']);
} finally {
	await pg.stop();
}
