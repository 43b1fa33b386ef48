/*
 * Growing an array: the one doubling loop every growable array in the
 * daemon and the collectors uses, hence in base/ (system headers only).
 */
#ifndef DLPROF_ARRAY_H
#define DLPROF_ARRAY_H

#include <stddef.h>

/*
 * Makes room for need (>= 1) elements of size bytes in the block p of *cap
 * elements: returns p when they fit, else p reallocated to the first
 * capacity of 16, 32, 64 ... elements that holds need, stored in *cap.
 * NULL when memory ran out or the bytes would overflow: p is then still the
 * caller's, unchanged, and so is *cap.
 */
void *array_grow(void *p, size_t *cap, size_t need, size_t size);

#endif
