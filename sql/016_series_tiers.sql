-- Reported series kept as their readers use them, in a store that keeps to
-- a size (daemon/store_blocks.c, store_tiers.c).  A job that reports every
-- step sends many points a second: its series' blocks of a span with more
-- than one point in some second are "dense".  Their points as sent stay
-- for the raw window (raw_hours) in series_raw; the same span's
-- per-second summaries (count, sum, min, max, last; series_summary.h) go
-- to series_seconds, kept as long as series_blocks (retention_days), and
-- every series' per-second data becomes per-minute summaries in
-- series_minutes, one block per series and hour, instead of one row of
-- series_minute per minute (some 55 bytes a row with its index, against a
-- few bytes a minute in a block).  A dense span's series share their
-- steps' times: the times of one job's span are kept once in series_times
-- and its dense blocks count points over them (series_codec.h); the
-- series that predicts them best (a step's time is the one before plus its
-- step time) is named, and may predict the others' values too.
--
-- Every block row is keyed as series_blocks is (sql/015): the span's index
-- times 2^32 plus the series' id (series_times: the job's id), an hour's
-- index for series_minutes.  Blocks written before this version stay
-- where they are and are read as they are: dense spans of older databases
-- are in series_blocks, their per-minute rows in series_minute until those
-- age out.  Blocks are now written in series_codec's version 3, which an
-- older dlprofd cannot read: it refuses the file (a newer schema).
CREATE TABLE series_raw (
	key INTEGER PRIMARY KEY,           -- t0 / 600 * 4294967296 + series_id
	data BLOB NOT NULL                 -- may count its times over the job's series_times row
);
CREATE TABLE series_times (
	key INTEGER PRIMARY KEY,           -- t0 / 600 * 4294967296 + job_id
	data BLOB NOT NULL,                -- a block of times and no column
	ref INTEGER                        -- the series whose values predict them (its step times), or NULL
);
CREATE TABLE series_seconds (
	key INTEGER PRIMARY KEY,           -- t0 / 600 * 4294967296 + series_id
	n INTEGER NOT NULL,                -- the span's points, summed over its seconds
	sum REAL NOT NULL,
	min REAL NOT NULL,
	max REAL NOT NULL,
	data BLOB NOT NULL                 -- per second: n, sum, min, max, last
);
CREATE TABLE series_minutes (
	key INTEGER PRIMARY KEY,           -- t0 / 3600 * 4294967296 + series_id
	data BLOB NOT NULL                 -- per minute: n, sum, min, max, last
);
-- A series that has had a dense span: readers of its spans look for
-- summaries as well as blocks; the others' spans are blocks alone.
ALTER TABLE series ADD COLUMN dense INTEGER NOT NULL DEFAULT 0;
-- The hour tier's oldest rows, found without a scan (the store's budget, /api/v1/node).
CREATE INDEX series_hour_t ON series_hour(t);
