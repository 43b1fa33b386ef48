/*
 * Implementation of dynlib.h.  Function pointers are stored through
 * memcpy: ISO C has no cast from dlsym's void * to a function pointer,
 * POSIX guarantees the representation.
 */
#include "dynlib.h"

#include <dlfcn.h>
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
