-- Each run of a service task: one row per task, period and site, inserted by the process that
-- starts it. The primary key makes a run happen once per period and site across every process of
-- the cluster and across restarts; `handler` is the script handler it started (overlap checks).
CREATE TABLE svctask_runs (
  domain TEXT NOT NULL,
  task TEXT NOT NULL,
  period TEXT NOT NULL,
  site TEXT NOT NULL,
  node TEXT NOT NULL,
  handler TEXT,
  regular INTEGER NOT NULL,
  claimed TEXT NOT NULL,
  -- when the period ends (null: never, a one-time task's): a claim is kept until then
  ends TEXT,
  PRIMARY KEY (domain, task, period, site)
);
CREATE INDEX svctask_runs_ends ON svctask_runs (ends);
