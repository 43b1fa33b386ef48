/*
 * Real data for the browser tests, sent through the API the way the dlprof
 * client sends it: a job with phases that reports every second and follows
 * the config the daemon answers (so the tuner opens trials and switches), a
 * short job without phases that ended, a job that reported nothing, and a
 * job whose strings are hostile markup.  Returns what was sent, so tests
 * compare what the page draws with it.
 */

export const HOSTILE = '<img src=x onerror=window.__xss=1>';
export const HOSTILE_PHASE = '<b onmouseover=window.__xss=2>bold</b>';

/* Throughput the fake model gets from a config: more threads help, up to 4. */
function throughput(cfg, i) {
	const t = Number(cfg && cfg.intra_threads) || 1;
	return 100 + 40 * Math.min(t, 4) - 5 * Math.max(0, t - 4) + (i % 7);
}

/*
 * A job that reports `points` steps, one per second ending now, in batches
 * of `batch` steps.  phases: names reported with phase_time_s; loss: whether
 * it reports a loss.  Returns {id, points, configs, start} (start: its first sample's time).
 */
export async function reportingJob(d, reg, { points, batch = 20, phases = [], loss = true, t0 } = {}) {
	const job = await d.api('POST', 'jobs', reg);
	let config = job.config || {};
	const start = t0 ?? Math.floor(Date.now() / 1000) - points;
	const configs = new Set();
	for (let i = 0; i < points; i += batch) {
		const samples = [];
		for (let k = i; k < Math.min(points, i + batch); k++) {
			const t = start + k;
			const tp = throughput(config, k);
			samples.push({ t, name: 'samples_per_s', value: tp });
			samples.push({ t, name: 'step_time_s', value: 64 / tp });
			if (loss)
				samples.push({ t, name: 'loss', value: 3 * Math.exp(-k / 120) + 0.1 });
			for (const [j, ph] of phases.entries())
				samples.push({ t, name: 'phase_time_s', value: (0.2 + 0.1 * j) * 64 / tp, phase: ph });
		}
		configs.add(JSON.stringify(config));
		const answer = await d.api('POST', `jobs/${job.id}/metrics`, { samples, config });
		config = answer.config || config;
	}
	return { id: job.id, points, configs, start };
}

export async function seed(d) {
	const lstm = await reportingJob(d, {
		workload: 'lstm-train', params: { batch: 64, hidden: 512 }, pid: process.pid, external_id: 'slurm:4242',
	}, { points: 300, phases: ['embedding', 'lstm'] });
	const resnet = await reportingJob(d, { workload: 'resnet-infer', params: { batch: 32 } }, { points: 5, batch: 5, loss: false });
	await d.api('POST', `jobs/${resnet.id}/end`, { exit_status: 0 });
	const silent = await d.api('POST', 'jobs', { workload: 'silent-job' });
	return { lstm, resnet, silent: { id: silent.id } };
}

export async function seedHostile(d) {
	return reportingJob(d, { workload: HOSTILE, params: { '<script>': '</td><img src=x onerror=window.__xss=3>' } },
		{ points: 30, batch: 10, phases: [HOSTILE_PHASE] });
}
