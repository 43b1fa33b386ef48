/*
 * The text form of a job's diagnosis (GET /api/v1/jobs/{id}/report), as
 * `dlprofctl report JOB` prints it and the Slurm epilog appends it to the
 * job's output: a headline, then each verdict with its span, hint, fix and
 * evidence, then what could not be decided.
 */
#ifndef DLPROF_CTL_REPORT_H
#define DLPROF_CTL_REPORT_H

#include <jansson.h>
#include <stdio.h>

void ctl_print_report(FILE *out, const json_t *report);

#endif
