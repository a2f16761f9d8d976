-- Credential requests are stored under the SHA-256 of their id (storage/requests.ts), so a copy of
-- the database holds no live link; rows stored before keep their raw id until they expire (three
-- days at most). `account` is the user whose credentials a request sets (password reset,
-- invitation): a change of that user's password, e-mail or login voids the account's requests.
ALTER TABLE iam_requests ADD COLUMN account TEXT;
UPDATE iam_requests SET account = json_extract(doc, '$.userId') WHERE kind IN ('pwd_reset', 'invite');
CREATE INDEX iam_requests_account ON iam_requests (domain, account) WHERE account IS NOT NULL;
