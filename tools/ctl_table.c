/*
 * dlprofctl's table printer: collects rows, then prints them aligned.
 */
#include "ctl_table.h"

#include <stdlib.h>
#include <string.h>

int ctl_table_init(struct ctl_table *t, size_t ncols, const char *const *headers)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	return ctl_table_add(t, headers);
}

int ctl_table_add(struct ctl_table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **p = realloc(t->cells, cap * t->ncols * sizeof(*p));
		if (!p)
			return -1;
		t->cells = p;
		t->cap = cap;
	}
	for (size_t i = 0; i < t->ncols; i++) {
		char *copy = strdup(cells[i] ? cells[i] : "-");
		if (!copy) {
			for (size_t j = 0; j < i; j++)
				free(t->cells[t->nrows * t->ncols + j]);
			return -1;
		}
		t->cells[t->nrows * t->ncols + i] = copy;
	}
	t->nrows++;
	return 0;
}

void ctl_table_print(const struct ctl_table *t, FILE *out)
{
	size_t width[32] = {0};
	size_t ncols = t->ncols < 32 ? t->ncols : 32;

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < ncols; c++) {
			size_t n = strlen(t->cells[r * t->ncols + c]);
			if (n > width[c])
				width[c] = n;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < ncols; c++) {
			const char *cell = t->cells[r * t->ncols + c];
			/* The last column is not padded: no trailing blanks. */
			if (c + 1 == ncols)
				fprintf(out, "%s\n", cell);
			else
				fprintf(out, "%-*s  ", (int)width[c], cell);
		}
	}
}

void ctl_table_free(struct ctl_table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}
