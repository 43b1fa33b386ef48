-- The initial schema: node, workloads, jobs, samples, trials.
-- Times are unix seconds (REAL).  JSON columns hold canonical JSON text.

CREATE TABLE node (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	hostname TEXT NOT NULL,
	hw_class TEXT NOT NULL,
	topology TEXT NOT NULL,            -- JSON object, as /api/v1/node shows it
	updated REAL NOT NULL
);

-- A workload is a name plus canonical parameters on a hardware class.
CREATE TABLE workloads (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL,
	params TEXT NOT NULL DEFAULT '{}', -- JSON object, keys sorted
	hw_class TEXT NOT NULL,
	created REAL NOT NULL,
	UNIQUE (name, params, hw_class)
);

CREATE TABLE jobs (
	id INTEGER PRIMARY KEY,
	workload_id INTEGER NOT NULL REFERENCES workloads(id),
	external_id TEXT,                  -- e.g. slurm:123
	pid INTEGER,
	uid INTEGER,                       -- owner, when registered over the Unix socket
	state TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'ended')),
	objective TEXT NOT NULL DEFAULT 'throughput',
	knobs TEXT,                        -- JSON: knobs the job declared
	config TEXT,                       -- JSON: the config it runs now
	source TEXT NOT NULL DEFAULT 'registered',
	command TEXT,
	started REAL NOT NULL,
	ended REAL,
	exit_status INTEGER
);
CREATE INDEX jobs_state ON jobs(state);
CREATE INDEX jobs_external ON jobs(external_id);

-- Raw samples; job_id 0 is the node itself.
CREATE TABLE samples (
	job_id INTEGER NOT NULL,
	t REAL NOT NULL,
	name TEXT NOT NULL,
	value REAL NOT NULL,
	phase TEXT
);
CREATE INDEX samples_job_name_t ON samples(job_id, name, t);

-- A span of one job (and phase) running one config, with its objective.
CREATE TABLE trials (
	id INTEGER PRIMARY KEY,
	workload_id INTEGER NOT NULL REFERENCES workloads(id),
	job_id INTEGER REFERENCES jobs(id),
	phase TEXT NOT NULL DEFAULT '',
	config TEXT NOT NULL,              -- JSON object
	objective TEXT NOT NULL,
	n INTEGER NOT NULL DEFAULT 0,      -- measurements
	mean REAL,
	m2 REAL,                           -- sum of squared deviations (Welford)
	t_start REAL NOT NULL,
	t_end REAL
);
CREATE INDEX trials_workload ON trials(workload_id, phase);
CREATE INDEX trials_job ON trials(job_id);

-- The newest value of each series, so job views need not scan samples.
CREATE TABLE latest (
	job_id INTEGER NOT NULL,
	name TEXT NOT NULL,
	t REAL NOT NULL,
	value REAL NOT NULL,
	PRIMARY KEY (job_id, name)
) WITHOUT ROWID;
