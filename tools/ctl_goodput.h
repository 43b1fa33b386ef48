/*
 * The text form of a goodput answer (the "goodput" member of
 * /api/v1/recommend and /api/v1/workloads/{name} under objective=goodput):
 * the noise scale and the baseline, then per config its global batch,
 * samples/s, statistical efficiency, raw and learning speed-up.
 */
#ifndef DLPROF_CTL_GOODPUT_H
#define DLPROF_CTL_GOODPUT_H

#include <jansson.h>
#include <stdio.h>

void ctl_print_goodput(FILE *out, const json_t *goodput);

#endif
