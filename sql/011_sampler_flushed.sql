-- The sampler's points are kept in the writer's memory until their
-- ten-minute span closes, then encoded into blocks (daemon/store_pending.c,
-- store_blocks.c): no staged row each.  One row: the sampler's points
-- before t are in blocks; a reader adds the points in memory at or after
-- the t its snapshot shows, so a flush committing between two reads can
-- neither hide nor double a point.  A clean stop writes the points still
-- in memory as staged rows.
CREATE TABLE sampler_flushed (
	t REAL NOT NULL
);
INSERT INTO sampler_flushed (t) VALUES (0);
