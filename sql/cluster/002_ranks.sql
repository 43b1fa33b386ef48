-- The ranks of distributed jobs (daemon/cluster_ranks.c): each node shares
-- the ranks of its jobs that span nodes, keyed by the job's shared identity
-- (job_key: the external id its ranks join by, the Slurm job and step or
-- the launcher's run id) and the rank, so every node of the job reads the
-- ranks of the others.  One row per rank, replaced by each push of newer
-- figures; a push sent twice stores the same row.  Figures are as the rank's
-- node computed them: sums since the rank's first report (steps, step_s,
-- comm_s, data_s), its latest throughput, its CPU use in cores.
CREATE TABLE dlprofd_ranks (
	job_key TEXT NOT NULL,
	rank INTEGER NOT NULL,
	store_id TEXT NOT NULL,                -- the sharing node's database
	shared_by TEXT NOT NULL,               -- the sharing node's name (cluster_node)
	node TEXT NOT NULL,                    -- the rank's node, as its process named it
	world_size INTEGER,
	local_rank INTEGER,
	pid BIGINT,
	state TEXT NOT NULL,                   -- running | ended
	joined DOUBLE PRECISION NOT NULL,
	updated DOUBLE PRECISION,              -- the rank's last report (unix seconds)
	steps BIGINT NOT NULL,
	step_s DOUBLE PRECISION NOT NULL,
	comm_s DOUBLE PRECISION NOT NULL,
	data_s DOUBLE PRECISION NOT NULL,
	samples_per_s DOUBLE PRECISION,
	cpu_cores DOUBLE PRECISION,
	wait_cores DOUBLE PRECISION,
	received TIMESTAMPTZ NOT NULL DEFAULT now(),
	PRIMARY KEY (job_key, rank)
);

-- Stores a batch (a JSON array of ranks); a rank that joined later (the
-- job's identity reused, or the rank restarted) replaces an older one,
-- never the reverse.  Returns how many rows changed.
CREATE FUNCTION dlprofd_push_ranks(batch json) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	changed integer;
BEGIN
	INSERT INTO dlprofd_ranks AS d (job_key, rank, store_id, shared_by, node, world_size, local_rank, pid,
		state, joined, updated, steps, step_s, comm_s, data_s, samples_per_s, cpu_cores, wait_cores)
	SELECT job_key, rank, store_id, shared_by, node, world_size, local_rank, pid, state, joined, updated,
		steps, step_s, comm_s, data_s, samples_per_s, cpu_cores, wait_cores
	FROM json_to_recordset(batch) AS r(job_key text, rank integer, store_id text, shared_by text, node text,
		world_size integer, local_rank integer, pid bigint, state text, joined double precision,
		updated double precision, steps bigint, step_s double precision, comm_s double precision,
		data_s double precision, samples_per_s double precision, cpu_cores double precision,
		wait_cores double precision)
	ON CONFLICT (job_key, rank) DO UPDATE SET store_id = excluded.store_id, shared_by = excluded.shared_by,
		node = excluded.node, world_size = excluded.world_size, local_rank = excluded.local_rank,
		pid = excluded.pid, state = excluded.state, joined = excluded.joined, updated = excluded.updated,
		steps = excluded.steps, step_s = excluded.step_s, comm_s = excluded.comm_s, data_s = excluded.data_s,
		samples_per_s = excluded.samples_per_s, cpu_cores = excluded.cpu_cores,
		wait_cores = excluded.wait_cores, received = now()
	WHERE excluded.joined >= d.joined;
	GET DIAGNOSTICS changed = ROW_COUNT;
	RETURN changed;
END
$$;
