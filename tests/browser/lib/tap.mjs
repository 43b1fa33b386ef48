/*
 * A tiny TAP producer for the browser tests: numbered ok/not ok lines with
 * YAML-ish diagnostics, a plan printed at the end, whole-file skips as
 * "1..0 # SKIP reason", and an exit status automake's tap-driver agrees with.
 */

export class Tap {
	constructor() {
		this.n = 0;
		this.failed = 0;
		this.done = false;
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

	/* The whole file cannot run here: says why, exits 0. */
	skipAll(reason) {
		console.log(`1..0 # SKIP ${reason}`);
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
		console.log(`1..${this.n}`);
		this.done = true;
		process.exitCode = this.failed ? 1 : 0;
	}
}
