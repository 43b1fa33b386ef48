-- The cluster store's outbox (daemon/cluster.c): trials completed on this
-- node wait here, in the same database and the same transaction as the
-- trial itself, until the shared PostgreSQL store has committed them.  A
-- crash between that commit and the delete here sends a trial twice; the
-- shared store keys trials by (store_id, trial_id) and stores it once.
--
-- Only while the cluster store is configured (cluster_meta.enabled, set at
-- every start) do trials enter the outbox.  It is bounded: a trial more than
-- outbox_limit trials older than the newest is dropped from it (and counted
-- in dropped), so a database down for weeks costs the node bounded space.
CREATE TABLE cluster_meta (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	store_id TEXT NOT NULL,            -- this database's name in the shared store, random
	enabled INTEGER NOT NULL DEFAULT 0,
	outbox_limit INTEGER NOT NULL DEFAULT 100000,
	dropped INTEGER NOT NULL DEFAULT 0 -- trials dropped from a full outbox, ever
);
INSERT INTO cluster_meta (id, store_id) VALUES (1, lower(hex(randomblob(8))));

CREATE TABLE cluster_outbox (
	trial_id INTEGER PRIMARY KEY REFERENCES trials(id) ON DELETE CASCADE
);

CREATE TRIGGER trials_cluster_outbox AFTER INSERT ON trials
WHEN (SELECT enabled FROM cluster_meta WHERE id = 1)
BEGIN
	INSERT INTO cluster_outbox (trial_id) VALUES (NEW.id);
	UPDATE cluster_meta SET dropped = dropped + (SELECT count(*) FROM cluster_outbox
		WHERE trial_id <= NEW.id - (SELECT outbox_limit FROM cluster_meta WHERE id = 1)) WHERE id = 1;
	DELETE FROM cluster_outbox WHERE trial_id <= NEW.id - (SELECT outbox_limit FROM cluster_meta WHERE id = 1);
END;
