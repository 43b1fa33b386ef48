-- A job's phases without reading all its samples: a partial index on the
-- samples that carry a phase, walked one distinct phase at a time
-- (store_jobs.c).  Job views slowed from 0.05 ms to 120 ms once a job had
-- 150,000 samples (bench/RESULTS.md).
CREATE INDEX samples_job_phase ON samples(job_id, phase) WHERE phase IS NOT NULL;
