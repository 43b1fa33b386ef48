-- Per-second history in compressed blocks (daemon/store_blocks.c).  A
-- series is one name of one job (0: the node) in one phase ('' for none).
-- New samples land in `samples`, which stays as the staging table: rows
-- there are the unflushed tail that queries read as they are.  Every
-- minute the writer encodes the staged rows of closed ten-minute spans
-- into one block per series (series_codec.c: a few bits a point instead
-- of a ~47-byte row) and adds them to the hour tier; after the raw
-- retention a block's points become per-minute rows and the block goes.
-- The rows stored before this migration are staged rows like any other,
-- so the flushes encode them bit for bit; today's per-minute rollups move
-- to the minute tier (sum = mean * n) and the hour tier is built from them.

CREATE TABLE series (
	id INTEGER PRIMARY KEY,
	job_id INTEGER NOT NULL,
	name TEXT NOT NULL,
	phase TEXT NOT NULL DEFAULT '',
	UNIQUE (job_id, name, phase)
);
-- A job's phases (store_jobs.c) without reading its blocks.
CREATE INDEX series_job_phase ON series(job_id, phase);

-- The raw points of one series in one ten-minute span, encoded; n, sum,
-- min and max summarize the block, so spans of days read no blob.
CREATE TABLE series_blocks (
	series_id INTEGER NOT NULL,
	t0 INTEGER NOT NULL,               -- start of the span, unix seconds, a multiple of 600
	n INTEGER NOT NULL,
	sum REAL NOT NULL,
	min REAL NOT NULL,
	max REAL NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (series_id, t0)
) WITHOUT ROWID;
-- Retention walks blocks by age across all series.
CREATE INDEX series_blocks_t0 ON series_blocks(t0);

-- Per-minute and per-hour aggregates; t is the start of the minute or hour.
CREATE TABLE series_minute (
	series_id INTEGER NOT NULL,
	t INTEGER NOT NULL,
	n INTEGER NOT NULL,
	sum REAL NOT NULL,
	min REAL NOT NULL,
	max REAL NOT NULL,
	PRIMARY KEY (series_id, t)
) WITHOUT ROWID;
CREATE INDEX series_minute_t ON series_minute(t);
CREATE TABLE series_hour (
	series_id INTEGER NOT NULL,
	t INTEGER NOT NULL,
	n INTEGER NOT NULL,
	sum REAL NOT NULL,
	min REAL NOT NULL,
	max REAL NOT NULL,
	PRIMARY KEY (series_id, t)
) WITHOUT ROWID;

INSERT INTO series (job_id, name, phase) SELECT DISTINCT job_id, name, phase FROM samples_rollup;
INSERT INTO series_minute (series_id, t, n, sum, min, max)
	SELECT s.id, CAST(r.t AS INTEGER), r.n, r.mean * r.n, r.min, r.max FROM samples_rollup r
	JOIN series s ON s.job_id = r.job_id AND s.name = r.name AND s.phase = r.phase;
INSERT INTO series_hour (series_id, t, n, sum, min, max)
	SELECT series_id, t / 3600 * 3600, sum(n), sum(sum), min(min), max(max) FROM series_minute GROUP BY 1, 2;
DROP TABLE samples_rollup;
