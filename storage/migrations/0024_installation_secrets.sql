-- Secrets at rest and the first administrator. `secrets_key` is the id (not the key) of the key the
-- channels' signing secrets are sealed with, recorded when the first key is taken, so a start with
-- another key, or none, is told apart from a new installation. `admin_pending` is the id of the
-- first administrator while the password generated for it has not been announced by a start that
-- got as far as listening: the next start then generates another (src/identity/bootstrap.ts).
ALTER TABLE installation ADD COLUMN secrets_key TEXT;
ALTER TABLE installation ADD COLUMN admin_pending TEXT;
