-- Blocks in a rowid table (daemon/store_blocks.c).  In the WITHOUT ROWID
-- table of 007 a row lives in an index b-tree, whose rows keep at most
-- ~1,000 bytes on a 4 KiB page: a block of a noisy series (600 points at
-- 1-2 bytes) spilled its tail into an overflow page of its own, and a
-- flush inserting one block per series scattered rows across the key
-- space, leaving leaves half empty.  Measured with bench/peers/history
-- (1 h, 50 jobs): 2.6 MB of pages for 1.2 MB of blocks.  A rowid table
-- keeps rows of up to ~4,000 bytes on their page and appends a flush's
-- rows in rowid order, so pages fill; (series_id, t0) stays unique through
-- the automatic index.  This version also marks the database as holding
-- blocks in series_codec's packed variant, which an older dlprofd cannot
-- read: it refuses the file instead (a newer schema).
ALTER TABLE series_blocks RENAME TO series_blocks_007;
CREATE TABLE series_blocks (
	series_id INTEGER NOT NULL,
	t0 INTEGER NOT NULL,               -- start of the span, unix seconds, a multiple of 600
	n INTEGER NOT NULL,
	sum REAL NOT NULL,
	min REAL NOT NULL,
	max REAL NOT NULL,
	data BLOB NOT NULL,
	UNIQUE (series_id, t0)
);
INSERT INTO series_blocks (series_id, t0, n, sum, min, max, data)
	SELECT series_id, t0, n, sum, min, max, data FROM series_blocks_007 ORDER BY t0, series_id;
DROP TABLE series_blocks_007;
-- Retention walks blocks by age across all series.
CREATE INDEX series_blocks_t0 ON series_blocks(t0);
