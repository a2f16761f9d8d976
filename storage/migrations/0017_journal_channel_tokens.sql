-- A channel's tokens authorize as the channel: the journal now records them masked, and the records
-- written before do too (a recorded token_local is the live one until the channel is deleted).
UPDATE journal
SET obj = json_replace(obj, '$.token_local', '***', '$.token_remote', '***', '$.token_remote2', '***'),
    prev = CASE WHEN prev IS NULL THEN NULL
           ELSE json_replace(prev, '$.token_local', '***', '$.token_remote', '***', '$.token_remote2', '***') END
WHERE objtype = 'integration_point';
