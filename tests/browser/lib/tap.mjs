/*
 * A tiny TAP producer for the browser tests: numbered ok/not ok lines with
 * YAML-ish diagnostics, and an exit status automake's tap-driver agrees with.
 * Each file declares its cases up front (new Tap(N): the plan comes first and
 * the driver checks the cases run against it), so a machine that cannot run
 * it reports each of the N skipped, saying why, rather than one "1..0".
 */

export class Tap {
	constructor(plan) {
		this.n = 0;
		this.failed = 0;
		this.done = false;
		this.plan = plan;
		if (plan !== undefined)
			console.log(`1..${plan}`);
	}

	/* One test case; returns cond so callers can stop early on failure. */
	ok(cond, name, diag) {
		this.n++;
		const safe = String(name).replace(/#/g, '\\#').replace(/\n/g, ' ');
		console.log(`${cond ? 'ok' : 'not ok'} ${this.n} - ${safe}`);
		if (!cond) {
			this.failed++;
			if (diag !== undefined)
				this.diag(diag);
		}
		return !!cond;
	}

	equal(got, want, name) {
		return this.ok(Object.is(got, want), name, { got, want });
	}

	skip(name, reason) {
		this.n++;
		console.log(`ok ${this.n} - ${String(name).replace(/#/g, '\\#')} # SKIP ${reason}`);
	}

	diag(x) {
		const text = typeof x === 'string' ? x : JSON.stringify(x, null, 2);
		for (const line of String(text).split('\n'))
			console.log('# ' + line);
	}

	/* The whole file cannot run here: each declared case is skipped, saying why; exits 0. */
	skipAll(reason) {
		if (this.plan === undefined)
			this.bail('skipAll needs the cases declared: new Tap(N)');
		while (this.n < this.plan)
			this.skip(`case ${this.n + 1} of ${this.plan}`, reason);
		this.done = true;
		process.exit(0);
	}

	/* Something broke outside any case: TAP "Bail out!" and a failing exit. */
	bail(reason) {
		console.log(`Bail out! ${String(reason).replace(/\n/g, ' ')}`);
		this.done = true;
		process.exit(1);
	}

	end() {
		if (this.plan === undefined)
			console.log(`1..${this.n}`);
		this.done = true;
		process.exitCode = this.failed ? 1 : 0;
	}
}
