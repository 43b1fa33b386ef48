/*
 * Implementation of array.h.  Doubling keeps appends amortised O(1); the
 * first 16 elements avoid a reallocation per append while arrays are small.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#include "array.h"

#define ARRAY_FIRST_CAP 16

void *array_grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : ARRAY_FIRST_CAP;
	void *np;

	assert(need >= 1 && size >= 1);
	assert(p || *cap == 0);
	if (need <= *cap)
		return p;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
	if (n > SIZE_MAX / size || !(np = realloc(p, n * size)))
		return NULL;
	*cap = n;
	return np;
}
