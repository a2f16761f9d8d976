-- A websocket subscriber resuming from a sequence number reads its domain's journal after it.
CREATE INDEX journal_domain_seq ON journal (domain, seq);
