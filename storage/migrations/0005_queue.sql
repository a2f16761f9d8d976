-- The durable queue: work that must survive a restart (mail now; product-layer orders; later
-- webhook deliveries and script runs). A job is claimed with a lease (`run_at` holds the lease's
-- end while `running`); a job whose holder died is due again when the lease ends. Jobs of one kind
-- with the same `serial` run one at a time, in order (product-layer orders of one domain).
CREATE TABLE queue (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  domain TEXT NOT NULL,
  serial TEXT,
  payload TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  run_at INTEGER NOT NULL,
  created TEXT NOT NULL,
  finished TEXT,
  error TEXT,
  result TEXT
);
CREATE INDEX queue_due ON queue (kind, status, run_at);
CREATE INDEX queue_serial ON queue (kind, serial, status, seq);
CREATE INDEX queue_domain ON queue (domain);

-- Mail moves from its own outbox into the queue: pending/sending wait, sent/logged are done.
INSERT INTO queue (id, kind, domain, serial, payload, status, attempts, run_at, created, finished, error, result)
SELECT id, 'mail', domain, NULL,
  json_object('recipient', recipient, 'subject', subject, 'text', text, 'html', html),
  CASE status WHEN 'sending' THEN 'pending' WHEN 'sent' THEN 'done' WHEN 'logged' THEN 'done' ELSE status END,
  attempts, next_attempt, created,
  CASE WHEN status IN ('sent', 'logged', 'failed') THEN created END,
  error,
  CASE status WHEN 'sent' THEN json_object('provider_id', provider_id) WHEN 'logged' THEN json_object('logged', json('true')) END
FROM outbox;
DROP TABLE outbox;

-- Product-layer orders already recorded but not carried out get their job.
INSERT INTO queue (id, kind, domain, serial, payload, status, attempts, run_at, created)
SELECT lower(hex(randomblob(16))), 'layer-order', domain, domain, json_object('opId', id), 'pending', 0, 0, ct
FROM product_layers WHERE json_extract(doc, '$.status') = 'registered';
