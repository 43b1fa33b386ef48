-- A block's span and series as its rowid (daemon/store_blocks.c):
-- key = t0 / 600 * 2^32 + series_id.  A flush writes one span's blocks,
-- so keys ascend as before and a flush appends its rows in order, pages
-- filling; a block is found by its key, the blocks of a span range are one
-- range of keys (retention deletes it without an index), and a series'
-- blocks over a range of spans are a key lookup a span.  The two indexes
-- of 010, (series_id, t0) and t0, and the two columns, cost some 35 bytes
-- a block: 0.06 byte a stored point of a series read every second, ten
-- times that for one read every 10 s (bench/RESULTS.md, history).
-- Series ids stay below 2^32 (the writer refuses one above).
ALTER TABLE series_blocks RENAME TO series_blocks_010;
CREATE TABLE series_blocks (
	key INTEGER PRIMARY KEY,           -- t0 / 600 * 4294967296 + series_id; t0 a multiple of 600
	n INTEGER NOT NULL,
	sum REAL NOT NULL,
	min REAL NOT NULL,
	max REAL NOT NULL,
	data BLOB NOT NULL
);
INSERT INTO series_blocks (key, n, sum, min, max, data)
	SELECT t0 / 600 * 4294967296 + series_id, n, sum, min, max, data FROM series_blocks_010
	WHERE t0 >= 0 AND t0 % 600 = 0 AND series_id BETWEEN 0 AND 4294967295 ORDER BY 1;
DROP TABLE series_blocks_010;
