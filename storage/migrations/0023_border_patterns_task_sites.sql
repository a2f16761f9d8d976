-- Two stored meanings kept across a change of what the values mean.
-- Border rule patterns were matched against the whole value and are now found anywhere in it: each
-- stored non-empty pattern p becomes ^(?:p)$, which matches what p matched before.
UPDATE borderrules
SET doc = json_set(doc, '$.domain', '^(?:' || json_extract(doc, '$.domain') || ')$'), version = version + 1
WHERE coalesce(json_extract(doc, '$.domain'), '') <> '';
UPDATE borderrules
SET doc = json_set(doc, '$.username', '^(?:' || json_extract(doc, '$.username') || ')$'), version = version + 1
WHERE coalesce(json_extract(doc, '$.username'), '') <> '';
UPDATE borderrules
SET doc = json_set(doc, '$.useragent', '^(?:' || json_extract(doc, '$.useragent') || ')$'), version = version + 1
WHERE coalesce(json_extract(doc, '$.useragent'), '') <> '';
-- Service tasks had two site modes over an optional sites list: `all` ran on every listed site that
-- has a service node (every such site when none was listed), `firstsite` on the first of those.
-- `all` and `firstsite` now ignore the list: a stored `all` with sites is now `alllisted`, and a
-- stored `firstsite` with sites `anylisted` (one run a period on one of the listed sites that has a
-- node: the nearest mode, though no longer the first listed of them by order).
UPDATE svctasks
SET doc = json_set(doc, '$.sitemode', CASE json_extract(doc, '$.sitemode') WHEN 'all' THEN 'alllisted' ELSE 'anylisted' END),
    version = version + 1
WHERE json_extract(doc, '$.sitemode') IN ('all', 'firstsite') AND coalesce(json_extract(doc, '$.sites'), '') <> '';
