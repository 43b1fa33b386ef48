/*
 * Where the collectors' tests find their fixture trees: under
 * $DLPROF_SRCDIR/tests/fixtures (set by make check), or relative to the
 * current directory when a test is run by hand from the source tree.
 */
#ifndef DLPROF_COLLECTORS_FIXTURE_H
#define DLPROF_COLLECTORS_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

static inline const char *
fixture_path(char *buf, size_t len, const char *rel)
{
	const char *src = getenv("DLPROF_SRCDIR");

	snprintf(buf, len, "%s/tests/fixtures/%s", src != NULL ? src : ".", rel);
	return buf;
}

#endif
