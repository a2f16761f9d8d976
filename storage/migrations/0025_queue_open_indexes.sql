-- The queue's due and serial indexes hold open jobs only (pending or running), as queue_open does.
-- A finished job leaves them instead of moving to another place in them, and a job of no serial (a
-- webhook delivery, mail) is in the serial index not at all: a delivery's insert and completion
-- changed two index entries more than the claims and the serial checks read. Measured on one file
-- (a queue row inserted claimed and completed, each in its own transaction): 211-242 µs a job
-- before, 176-181 after. The claims, the due check and the per-kind depths name the same condition,
-- so SQLite still uses them (the due check and the serial checks now read the job's row as well: the
-- status is no longer in the index). The prune and the release of all claims scanned the table before
-- as now; a listing of a kind's jobs in every domain (operators, tests) now scans it too.
DROP INDEX queue_due;
CREATE INDEX queue_due ON queue (kind, run_at) WHERE status IN ('pending', 'running');
DROP INDEX queue_serial;
CREATE INDEX queue_serial ON queue (kind, serial, seq) WHERE serial IS NOT NULL AND status IN ('pending', 'running');
