/*
 * Plain-text tables for dlprofctl's human output: rows of strings, columns
 * as wide as their widest cell, two spaces between them, the header in
 * capitals.  Widths count bytes, which is right for the ASCII that dlprofd
 * names are made of.
 */
#ifndef DLPROF_CTL_TABLE_H
#define DLPROF_CTL_TABLE_H

#include <stddef.h>
#include <stdio.h>

struct ctl_table {
	size_t ncols;
	size_t nrows;           /* rows, the header included */
	size_t cap;             /* rows allocated */
	char **cells;           /* nrows * ncols strings, owned */
};

/* A table whose first row is headers (ncols of them); 0 or -1 on ENOMEM. */
int ctl_table_init(struct ctl_table *t, size_t ncols, const char *const *headers);
/* Appends a row of ncols cells (copied; NULL prints as "-"). */
int ctl_table_add(struct ctl_table *t, const char *const *cells);
void ctl_table_print(const struct ctl_table *t, FILE *out);
void ctl_table_free(struct ctl_table *t);

#endif
