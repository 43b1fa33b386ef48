-- The ranks of distributed jobs, shared through the cluster store
-- (daemon/cluster_ranks.c): a rank row of a job with a shared identity
-- (jobs.external_id) that is written here while the cluster store is
-- configured marks the rank in this outbox, in the same transaction, until
-- the shared store has its newest figures.  One row per rank: a rank
-- reported again gets a new id (INSERT OR REPLACE), so a push that read the
-- older figures leaves the newer ones waiting.  Bounded like the trials'
-- outbox, by cluster_meta.outbox_limit rows.
CREATE TABLE cluster_rank_outbox (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	job_id INTEGER NOT NULL,
	rank INTEGER NOT NULL,
	UNIQUE (job_id, rank)
);

CREATE TRIGGER job_ranks_cluster_insert AFTER INSERT ON job_ranks
WHEN (SELECT enabled FROM cluster_meta WHERE id = 1)
	AND (SELECT external_id FROM jobs WHERE id = NEW.job_id) IS NOT NULL
BEGIN
	INSERT OR REPLACE INTO cluster_rank_outbox (job_id, rank) VALUES (NEW.job_id, NEW.rank);
	DELETE FROM cluster_rank_outbox WHERE id <= (SELECT max(id) FROM cluster_rank_outbox)
		- (SELECT outbox_limit FROM cluster_meta WHERE id = 1);
END;

CREATE TRIGGER job_ranks_cluster_update AFTER UPDATE ON job_ranks
WHEN (SELECT enabled FROM cluster_meta WHERE id = 1)
	AND (SELECT external_id FROM jobs WHERE id = NEW.job_id) IS NOT NULL
BEGIN
	INSERT OR REPLACE INTO cluster_rank_outbox (job_id, rank) VALUES (NEW.job_id, NEW.rank);
	DELETE FROM cluster_rank_outbox WHERE id <= (SELECT max(id) FROM cluster_rank_outbox)
		- (SELECT outbox_limit FROM cluster_meta WHERE id = 1);
END;

-- The distributed jobs whose other ranks the cluster thread reads back.
CREATE INDEX jobs_distributed ON jobs(id) WHERE world_size > 1;
