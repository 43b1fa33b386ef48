-- Exactly-once ingest: the highest batch sequence number stored per job and
-- sender stream (store_samples.c).  A client that resends a batch whose
-- answer it never got (a reset connection) sends the same seq; the batch is
-- found here in the same transaction and not stored again.  Rows go with
-- their job.
CREATE TABLE ingest_seq (
	job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	stream TEXT NOT NULL,              -- the sender's name for itself; '' when it gave none
	seq INTEGER NOT NULL,              -- the highest stored
	PRIMARY KEY (job_id, stream)
) WITHOUT ROWID;
