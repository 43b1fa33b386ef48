-- Blocks are now written in series_codec's version 2 (common steps, Rice
-- sections), which a dlprofd of schema 13 or older cannot decode.  This
-- version changes no table: it marks the database as holding such blocks,
-- so an older dlprofd refuses the file (a newer schema) instead of
-- dropping its blocks as undecodable at their retention.  Version 1
-- blocks already stored are read as they are.
SELECT 1;
