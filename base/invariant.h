/*
 * Checks of invariants that comments state (a lock held, a count within its
 * capacity), for assert() in the test builds: configure compiles assert out
 * (-DNDEBUG) of builds without sanitizers, so a release pays nothing.
 */
#ifndef DLPROF_INVARIANT_H
#define DLPROF_INVARIANT_H

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

/*
 * Whether some thread holds m, for functions whose contract is "lock held".
 * A try-lock of a held (non-recursive) mutex fails with EBUSY, its owner's
 * included, so this cannot tell which thread holds it, only that the caller
 * did not forget to take it.  Were m free, the check leaves it locked; the
 * failed assert ends the process anyway.
 */
static inline bool lock_held(pthread_mutex_t *m)
{
	return pthread_mutex_trylock(m) == EBUSY;
}

#endif
