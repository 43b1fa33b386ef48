/*
 * The sustain rule (see diag_sustain.h).  A run is measured from the start
 * of its first window to the end of its latest, so a verdict needs windows
 * covering sustain_s, whatever their width.
 */
#include "diag_sustain.h"

enum diag_sustain_event
diag_sustain_step(struct diag_sustain *st, double t0, double t1, bool cond, double sustain_s, double *until)
{
	/* Off, a run is of the condition holding; on, of it failing. */
	if (cond == st->on) {
		st->run = false;
		return DIAG_SUSTAIN_NONE;
	}
	if (!st->run) {
		st->run = true;
		st->run_since = t0;
	}
	if (t1 - st->run_since < sustain_s)
		return DIAG_SUSTAIN_NONE;
	st->run = false;
	st->on = !st->on;
	if (st->on) {
		st->since = st->run_since;
		return DIAG_SUSTAIN_START;
	}
	*until = st->run_since;
	return DIAG_SUSTAIN_END;
}
