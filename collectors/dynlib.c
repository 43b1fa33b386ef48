/*
 * Implementation of dynlib.h.  Function pointers are stored through
 * memcpy: ISO C has no cast from dlsym's void * to a function pointer,
 * POSIX guarantees the representation.
 */
#include "dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void *dynlib_open(const char *const *names, size_t nnames)
{
	void *lib = NULL;

	for (size_t i = 0; i < nnames && lib == NULL; i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	return lib;
}

const char *dynlib_bind(void *lib, const struct dynlib_symbol *syms, size_t nsyms, void *table)
{
	for (size_t i = 0; i < nsyms; i++) {
		void *sym = dlsym(lib, syms[i].symbol);
		if (sym == NULL && syms[i].required)
			return syms[i].symbol;
		memcpy((char *)table + syms[i].offset, &sym, sizeof(sym));
	}
	return NULL;
}

void *dynlib_load(const char *const *names, size_t nnames, const struct dynlib_symbol *syms, size_t nsyms,
		  void *table, const char *missing_advice, const char *old_advice, char *why, size_t why_len)
{
	void *lib = dynlib_open(names, nnames);
	const char *missing;

	if (lib == NULL) {
		snprintf(why, why_len, "%s not found: %s (%s)", names[0], missing_advice, dlerror());
		return NULL;
	}
	if ((missing = dynlib_bind(lib, syms, nsyms, table)) != NULL) {
		snprintf(why, why_len, "%s lacks %s: %s", names[0], missing, old_advice);
		dlclose(lib);
		return NULL;
	}
	return lib;
}
