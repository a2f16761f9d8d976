-- Fair claims (storage/queue.ts claimFairly) walk the domains that have open jobs of a kind and
-- take each one's due jobs oldest first. Finished jobs stay until pruned, so the index holds only
-- open ones: the walk steps from domain to domain without passing over a domain's history.
CREATE INDEX queue_open ON queue (kind, domain, run_at) WHERE status IN ('pending', 'running');
