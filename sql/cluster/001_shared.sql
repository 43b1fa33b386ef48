-- The shared store on PostgreSQL (daemon/cluster.c): the trials of every
-- node, keyed by the node's database (store_id) and its local trial id so a
-- trial sent twice is stored once.  Append-only: nodes never update or
-- delete a trial, so concurrent writers never conflict.
--
-- seq orders trials for the pull: a node reads "seq > the last it saw".
-- dlprofd_push() takes one transaction-scoped advisory lock before it
-- inserts, so seq values become visible in the order they were drawn and a
-- reader can never see seq 12 before a seq 11 that commits later.
CREATE TABLE dlprofd_trials (
	seq BIGSERIAL NOT NULL UNIQUE,
	store_id TEXT NOT NULL,
	trial_id BIGINT NOT NULL,
	node TEXT NOT NULL,                    -- the node's name (cluster_node, else its hostname)
	hw_class TEXT NOT NULL,
	workload TEXT NOT NULL,
	params TEXT NOT NULL,                  -- JSON object, keys sorted
	objective TEXT NOT NULL,
	phase TEXT NOT NULL,                   -- '' is the whole job
	config TEXT NOT NULL,                  -- JSON object
	job_id BIGINT,                         -- the job's id on its node
	n BIGINT NOT NULL,
	mean DOUBLE PRECISION NOT NULL,
	m2 DOUBLE PRECISION NOT NULL,
	t_start DOUBLE PRECISION NOT NULL,
	t_end DOUBLE PRECISION,
	declared TEXT,                         -- JSON: the knobs the workload was declared with then
	received TIMESTAMPTZ NOT NULL DEFAULT now(),
	PRIMARY KEY (store_id, trial_id)
);
CREATE INDEX dlprofd_trials_class_seq ON dlprofd_trials (hw_class, seq);
CREATE INDEX dlprofd_trials_workload ON dlprofd_trials (workload, hw_class);

-- Stores a batch (a JSON array of trials) in one transaction and wakes the
-- nodes of its classes; returns how many were new.
CREATE FUNCTION dlprofd_push(batch json) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	added integer;
	cls text;
BEGIN
	PERFORM pg_advisory_xact_lock(7235001);
	INSERT INTO dlprofd_trials (store_id, trial_id, node, hw_class, workload, params, objective, phase,
		config, job_id, n, mean, m2, t_start, t_end, declared)
	SELECT store_id, trial_id, node, hw_class, workload, params, objective, phase, config, job_id, n,
		mean, m2, t_start, t_end, declared
	FROM json_to_recordset(batch) AS r(store_id text, trial_id bigint, node text, hw_class text,
		workload text, params text, objective text, phase text, config text, job_id bigint, n bigint,
		mean double precision, m2 double precision, t_start double precision, t_end double precision,
		declared text)
	ON CONFLICT (store_id, trial_id) DO NOTHING;
	GET DIAGNOSTICS added = ROW_COUNT;
	IF added > 0 THEN
		FOR cls IN SELECT DISTINCT r.hw_class FROM json_to_recordset(batch) AS r(hw_class text) LOOP
			PERFORM pg_notify('dlprofd_trials', cls);
		END LOOP;
	END IF;
	RETURN added;
END
$$;
