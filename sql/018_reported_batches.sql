-- The points jobs report are kept in the writer's memory until their span
-- is encoded into blocks, as the sampler's are (sql/011), and made durable
-- as one row per batch rather than one row of samples per point
-- (daemon/store_batches.c): a batch is a blob of its points,
-- written in the transaction that acknowledges the post, and replayed into
-- memory when the store opens.  reported_flushed is the reported points'
-- flushed mark: those before t are in blocks, so a reader adds the points
-- in memory at or after the t its snapshot shows; a batch whose newest
-- point (tmax) is before the mark has been encoded whole and is deleted
-- with the flush that moved the mark past it.  A point that arrives for a
-- span already encoded (before the mark) is staged as a row of samples,
-- as every reported point was before this version; rows staged by an
-- older release stay there and are encoded as they were.
CREATE TABLE reported_batches (
	id INTEGER PRIMARY KEY,
	tmax REAL NOT NULL,                -- the batch's newest point
	data BLOB NOT NULL                 -- store_batches.c's format
);
CREATE INDEX reported_batches_tmax ON reported_batches(tmax);
CREATE TABLE reported_flushed (
	t REAL NOT NULL
);
INSERT INTO reported_flushed (t) VALUES (0);
