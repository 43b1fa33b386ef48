/*
 * Libraries that collectors load at run time (NVML, PAPI, likwid): open the
 * first of several sonames, and bind a table of function pointers from a
 * list of symbols, so no collector links a library the node may lack.
 */
#ifndef DLPROF_DYNLIB_H
#define DLPROF_DYNLIB_H

#include <stddef.h>

struct dynlib_symbol {
	size_t offset;        /* where the function pointer goes in the table */
	const char *symbol;
	int required;         /* missing: the binding fails */
};

/* dlopen (RTLD_NOW | RTLD_LOCAL) of the first name that loads; NULL if none (dlerror() says why). */
void *dynlib_open(const char *const *names, size_t nnames);

/*
 * Stores each symbol's address at table + offset (NULL for an optional one
 * that is missing).  Returns the first required symbol that is missing, or
 * NULL when all are bound.
 */
const char *dynlib_bind(void *lib, const struct dynlib_symbol *syms, size_t nsyms, void *table);

#endif
