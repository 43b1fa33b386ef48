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

/*
 * dynlib_open then dynlib_bind, with the reason a person can act on when
 * either fails: "NAME not found: MISSING_ADVICE (dlerror)" or "NAME lacks
 * SYMBOL: OLD_ADVICE", NAME being names[0].  Returns the handle, or NULL
 * (nothing left open) with why set.
 */
void *dynlib_load(const char *const *names, size_t nnames, const struct dynlib_symbol *syms, size_t nsyms,
		  void *table, const char *missing_advice, const char *old_advice, char *why, size_t why_len);

#endif
