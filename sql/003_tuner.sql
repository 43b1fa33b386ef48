-- What the tuner learned beyond its trials: per workload and objective, the
-- knobs its jobs declared (the space is rebuilt from them and the node), and
-- per phase whether a confident best was reached and when a drift was seen
-- (trials that started before it count as stale evidence).

CREATE TABLE tuner_workloads (
	workload_id INTEGER NOT NULL REFERENCES workloads(id),
	objective TEXT NOT NULL,
	declared TEXT,                     -- JSON object of declared knobs, or NULL
	updated REAL NOT NULL,
	PRIMARY KEY (workload_id, objective)
);

CREATE TABLE tuner_phases (
	workload_id INTEGER NOT NULL REFERENCES workloads(id),
	objective TEXT NOT NULL,
	phase TEXT NOT NULL,               -- '' is the whole job
	settled INTEGER NOT NULL DEFAULT 0,
	drift_t REAL NOT NULL DEFAULT 0,
	updated REAL NOT NULL,
	PRIMARY KEY (workload_id, objective, phase)
);
