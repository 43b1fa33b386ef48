-- Distributed jobs: the ranks of one job (store_ranks.c).  A job of many
-- processes (torch.distributed, srun, mpirun) is one row of jobs, shared by
-- its ranks through its external id (the Slurm job, the launcher's run id);
-- each rank that joined on this node is one row here, keyed by the job and
-- its rank and carrying its node, so views of several nodes can merge the
-- rows of one job by (external id, rank).  Figures are sums since the
-- rank's first report (its warm-up, left out): means are sum / steps.
ALTER TABLE jobs ADD COLUMN world_size INTEGER;   -- ranks in the whole job; NULL: not distributed
ALTER TABLE jobs ADD COLUMN nodes INTEGER;        -- nodes the job spans, when its launcher said

CREATE TABLE job_ranks (
	job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	rank INTEGER NOT NULL,
	local_rank INTEGER,
	node TEXT NOT NULL,
	pid INTEGER,
	state TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'ended')),
	exit_status INTEGER,
	joined REAL NOT NULL,
	updated REAL,                      -- last report
	steps INTEGER NOT NULL DEFAULT 0,  -- steps reported
	step_s REAL NOT NULL DEFAULT 0,    -- sum of step times
	comm_s REAL NOT NULL DEFAULT 0,    -- sum of time waiting in collectives
	data_s REAL NOT NULL DEFAULT 0,    -- sum of time in data phases
	samples_per_s REAL,                -- the rank's latest throughput
	cpu_s0 REAL, wait_s0 REAL, t0 REAL,-- the process's CPU and CPU-wait seconds at its first report
	cpu_s REAL, wait_s REAL, t REAL,   -- ... and at its latest
	PRIMARY KEY (job_id, rank)
) WITHOUT ROWID;
