-- Per-minute rollups of raw samples older than the retention time, so long
-- series stay queryable after their raw rows are deleted.  t is the start
-- of the minute; phase '' stands for no phase (NULL would defeat UNIQUE).

CREATE TABLE samples_rollup (
	job_id INTEGER NOT NULL,
	t REAL NOT NULL,
	name TEXT NOT NULL,
	phase TEXT NOT NULL DEFAULT '',
	n INTEGER NOT NULL,
	mean REAL NOT NULL,
	min REAL NOT NULL,
	max REAL NOT NULL,
	PRIMARY KEY (job_id, name, phase, t)
) WITHOUT ROWID;

-- Retention deletes by time across all jobs.
CREATE INDEX samples_t ON samples(t);
