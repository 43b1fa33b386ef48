-- A series' per-span totals, clustered by series: the charts' reads of
-- spans of ten minutes or more (a 14-day chart's 2,016 spans) find them
-- in a few index pages instead of one table page a span.  Block keys are
-- time-major (sql/015) so a flush appends its rows in order; on a month's
-- store a series' blocks lie on pages far apart, and a 14-day chart read
-- them at 5 to 14 ms (bench/RESULTS.md, "A disk budget for months").  The
-- index costs some 40 bytes a block: 0.07 byte a point of a series
-- sampled every second, its rows freed with the blocks'.
CREATE INDEX series_blocks_series ON series_blocks(key % 4294967296, key, n, sum, min, max);
CREATE INDEX series_seconds_series ON series_seconds(key % 4294967296, key, n, sum, min, max);
