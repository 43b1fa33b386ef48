/*
 * Many jobs with an hour of history, fed fast through the daemon's own
 * ingest route, for the tests and the benchmark of pages at scale.  Each
 * job is registered with the pid of a real process (a sleep: the sampler
 * samples it, and the job stays running as long as it lives), then its
 * past is posted in batches of up to 10,000 samples: per-thread CPU as
 * the proc collector stores it (thread.PID.TID.cores, one value per
 * thread every `every` seconds), throughput, step time, loss and the time
 * of a data and a compute phase.  The threads follow shapes a person
 * looks for in a heatmap: a main thread always at work, a pool busy in
 * compute and idle while data loads, a serial section every few minutes
 * where the pool waits, and some jobs whose pool never works.
 */
import { spawn } from 'node:child_process';

const BATCH = 10000;

/* A real process for a job to be: it sleeps, so it costs nothing and lives until stopped. */
export function sleeper() {
	const p = spawn('sleep', ['7200'], { stdio: 'ignore' });
	return p;
}

/* CPU of thread k of job j at step i: a value in cores, 0 to 1. */
function cores(j, k, i, threads) {
	const serial = i % 30 < 3;                 /* 30 s of every 5 min: one thread works */
	const loading = i % 6 === 0;               /* one step in six waits for data */
	const idlePool = j % 7 === 3;              /* this job's pool never works */
	const wobble = 0.04 * Math.sin(i * 0.7 + j + k);
	if (k === 0)
		return Math.min(1, Math.max(0, (loading ? 0.35 : 0.92) + wobble));
	if (idlePool || serial)
		return 0.002;
	return Math.min(1, Math.max(0, (loading ? 0.05 : 0.55 + 0.4 * (k / threads)) + wobble));
}

/*
 * Posts job id's past: `points` steps ending now, `every` seconds apart,
 * for `threads` threads of process pid (thread ids pid, pid+1, ...).
 */
export async function feedHistory(d, id, pid, j, { threads = 8, points = 360, every = 10 } = {}) {
	const end = Math.floor(Date.now() / 1000) - 1;
	let batch = [];
	const flush = async () => {
		if (batch.length)
			await d.api('POST', `jobs/${id}/metrics`, { samples: batch });
		batch = [];
	};
	for (let i = 0; i < points; i++) {
		const t = end - (points - 1 - i) * every;
		const loading = i % 6 === 0;
		const sps = (loading ? 300 : 900) + 40 * Math.sin(i / 9 + j) + 10 * j;
		batch.push({ t, name: 'samples_per_s', value: sps },
			{ t, name: 'step_time_s', value: 64 / sps },
			{ t, name: 'loss', value: 2.5 * Math.exp(-i / (120 + j)) + 0.2 },
			{ t, name: 'phase_time_s', phase: 'data', value: (loading ? 0.6 : 0.1) * 64 / sps },
			{ t, name: 'phase_time_s', phase: 'compute', value: (loading ? 0.4 : 0.9) * 64 / sps });
		for (let k = 0; k < threads; k++)
			batch.push({ t, name: `thread.${pid}.${pid + k}.cores`, value: Math.round(cores(j, k, i, threads) * 1e4) / 1e4 });
		if (batch.length >= BATCH - threads - 5)
			await flush();
	}
	await flush();
}

/*
 * `jobs` jobs of `threads` threads with an hour of history each (and, with
 * big > 0, one more job of `big` threads): returns {jobs: [{id, pid}],
 * big: {id, pid} | null, procs, stop()}.  stop() ends the processes.
 */
export async function seedScale(d, { jobs = 50, threads = 8, points = 360, every = 10, big = 0 } = {}) {
	const procs = [];
	const made = [];
	const one = async (j, n, workload) => {
		const p = sleeper();
		procs.push(p);
		const reg = await d.api('POST', 'jobs', { workload, params: { batch: 32 << (j % 4) }, pid: p.pid });
		await feedHistory(d, reg.id, p.pid, j, { threads: n, points, every });
		return { id: reg.id, pid: p.pid };
	};
	for (let j = 0; j < jobs; j++)
		made.push(await one(j, threads, `scale-${['resnet', 'bert', 'lstm', 'gpt'][j % 4]}`));
	const bigJob = big ? await one(jobs, big, 'scale-wide') : null;
	return {
		jobs: made,
		big: bigJob,
		procs,
		stop() {
			for (const p of procs)
				p.kill();
		},
	};
}
