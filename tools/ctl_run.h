/*
 * dlprofctl run's processes: the job's name from its command, the
 * client's zero-touch bootstrap on the ranks' PYTHONPATH, the ranks
 * started with the variables env:// reads (as srun gives each task its
 * own), under srun inside a Slurm allocation, and their exit statuses made
 * into the job's.  The daemon's part (registration, the config's variables,
 * the end) is in dlprofctl.c.
 */
#ifndef DLPROF_CTL_RUN_H
#define DLPROF_CTL_RUN_H

#include <stddef.h>

/* The workload's name for cmd: a Python script's name without .py, else the program's; returns buf. */
const char *ctl_run_workload(char *const *cmd, char *buf, size_t len);

/*
 * Prepares the zero-touch path: asks cmd's Python (python3 when cmd is not
 * one) where the dlprof client's bootstrap folder is, puts it first on
 * PYTHONPATH (its sitecustomize starts the client in every Python process
 * and then runs the site's own) and sets DLPROF_LAUNCHER, so the ranks
 * leave the job's end to the launcher.  -1, after saying why, when the
 * client cannot be imported: the command then runs without it.
 */
int ctl_run_bootstrap(char *const *cmd);

/* A TCP port free on 127.0.0.1 now (for MASTER_PORT), or -1. */
int ctl_run_free_port(void);

/*
 * Starts cmd as ranks processes and waits for them all.  Local (slurm 0):
 * rank i gets RANK=i, LOCAL_RANK=i, WORLD_SIZE=LOCAL_WORLD_SIZE=ranks.
 * Inside an allocation (slurm 1): one srun step of ranks tasks (0: as the
 * allocation says), each exporting RANK, LOCAL_RANK and WORLD_SIZE from
 * its SLURM_PROCID, SLURM_LOCALID and SLURM_NTASKS.  The rest of the
 * environment is the caller's.  Returns the job's exit status: the first
 * failing rank's (in rank order; 128 + N for a signal N), 0 when all
 * succeeded, or -1 when nothing could be started (after saying why).
 */
int ctl_run_ranks(char *const *cmd, int ranks, int slurm);

#endif
