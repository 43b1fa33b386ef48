-- What a job's timeline needs that no other table keeps (daemon/timeline.c,
-- GET /api/v1/jobs/{id}/timeline).  job_events: the configs a job was
-- given and why the tuner gave each (exploring a proposal, the best so
-- far, settled, re-exploring after a drift), written with the config in
-- the same transaction, and the ranks that left, with their exit status.
-- Its start and end, its ranks' joins and its trials stay where they are
-- (jobs, job_ranks, trials); verdicts are the diagnosis' over the stored
-- series.  series_labels: what a series is in words, for views: a
-- per-thread series (thread.PID.TID.*) is labelled with the thread's
-- name, written when the sampler first sees the thread or its name
-- changes.
CREATE TABLE job_events (
	id INTEGER PRIMARY KEY,
	job_id INTEGER NOT NULL,
	t REAL NOT NULL,                   -- unix seconds
	kind TEXT NOT NULL,                -- config | rank_left
	detail TEXT NOT NULL               -- JSON object: {"config","why"} | {"rank","exit_status"}
);
CREATE INDEX job_events_job ON job_events(job_id, t);

CREATE TABLE series_labels (
	job_id INTEGER NOT NULL,           -- 0: the node
	key TEXT NOT NULL,                 -- the series' name up to its last part: thread.PID.TID
	label TEXT NOT NULL,
	t REAL NOT NULL,                   -- when it was last set
	PRIMARY KEY (job_id, key)
) WITHOUT ROWID;
