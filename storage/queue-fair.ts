/**
 * Fair claims on the durable queue (storage/queue.ts): round robin over the domains with due jobs,
 * so one domain's backlog cannot hold every other domain's jobs behind it (claiming oldest first
 * did: a tenant with hanging receivers delayed another's deliveries by minutes). Both statements
 * go through the partial index `queue_open` (migration 0022): the walk steps from one domain with
 * open jobs to the next, and each domain's due jobs are read oldest first, at most `limit` of them.
 */
import type { Db } from './db'
import { COLUMNS, type Job, toJob } from './queue'
import { text } from './columns'

const OPEN = `kind = ?1 AND status IN ('pending', 'running')`

/** The domains with open jobs after `from`, one index seek each; `until` ends the walk. */
const walk = (name: string, from: string, until = '') => `${name}(domain) AS (
    SELECT (SELECT min(domain) FROM queue WHERE ${OPEN} AND domain > ${from})
    UNION ALL
    SELECT (SELECT min(domain) FROM queue WHERE ${OPEN} AND domain > ${name}.domain) FROM ${name}
    WHERE ${name}.domain IS NOT NULL ${until})`
const due = (name: string) => `${name}.domain IS NOT NULL AND ${name}.domain NOT IN (SELECT value FROM json_each(?4))
    AND EXISTS (SELECT 1 FROM queue WHERE ${OPEN} AND domain = ${name}.domain AND run_at <= ?3)`

/**
 * Up to ?5 domains with jobs due at ?3, other than those of ?4 (a JSON array), in round robin
 * order: those after ?2 first, then from the start up to ?2 itself. The walk is lazy: it stops at
 * the limit (domains with open jobs none of which is due yet are stepped over). It starts with
 * SELECT so the embedded driver runs it as a read: a statement it cannot tell from a write goes
 * through the group commit and empties the read cache (every pass of the worker did, and the
 * journal-change deliveries of bench/webhooks.ts fell from about 1,200 to 600-770 a second).
 */
const DUE_DOMAINS = `SELECT domain FROM (WITH RECURSIVE ${walk('a', '?2')}, ${walk('b', "''", 'AND b.domain < ?2')}
  SELECT domain FROM a WHERE ${due('a')}
  UNION ALL SELECT domain FROM b WHERE ${due('b')} AND b.domain <= ?2
  LIMIT ?5)`

/** The due jobs of domain ?2, oldest first, at most ?5; a job waits while an earlier job of its serial is open (as claimJobs). */
const DOMAIN_DUE = `SELECT e.seq FROM queue e
  WHERE e.kind = ?3 AND e.status IN ('pending', 'running') AND e.domain = ?2 AND e.run_at <= ?4
    AND (e.serial IS NULL OR NOT EXISTS (
      SELECT 1 FROM queue s WHERE s.kind = e.kind AND s.serial = e.serial AND s.seq < e.seq
        AND s.status IN ('pending', 'running')))
  ORDER BY e.run_at, e.seq LIMIT ?5`

const CLAIMED = `UPDATE queue SET status = 'running', attempts = attempts + 1, run_at = ?1 WHERE seq IN`

/**
 * Claims the jobs of ?2 (a JSON array of [domain, room]): each domain's due jobs oldest first, at
 * most its room, taken one per domain a round in the array's order until ?5 are taken.
 */
const CLAIM = `${CLAIMED} (
    SELECT seq FROM (
      SELECT q.seq, d.key AS pos, json_extract(d.value, '$[1]') AS room,
        row_number() OVER (PARTITION BY d.key ORDER BY q.run_at, q.seq) AS round
      FROM json_each(?2) d JOIN queue q
        ON q.seq IN (${DOMAIN_DUE.replace('e.domain = ?2', "e.domain = json_extract(d.value, '$[0]')")}))
    WHERE round <= room ORDER BY round, pos LIMIT ?5)
  RETURNING ${COLUMNS}`

/** The claim when one domain has due jobs (the usual case), without the rounds: ?2 is the domain, ?5 its room. */
const CLAIM_ONE = `${CLAIMED} (${DOMAIN_DUE}) RETURNING ${COLUMNS}`

/** What a fair claim may take: where the round robin goes on, and each domain's room. */
export interface Shares {
  /** The domain served last by the previous claim ('' at first): the walk starts after it. */
  after: string
  /** How many jobs a domain may take at most; 0 leaves it out. */
  room(domain: string): number
  /** The domains whose room is 0, so the walk does not count them. */
  full: readonly string[]
}

/**
 * Claims up to `limit` jobs of a kind due at `now`, a share per domain (round robin), in one
 * statement, so each job goes to one process. Answers the jobs and the domain to start after next
 * time. Asked first with a read, which also answers an idle queue without a write (see claimJobs).
 */
export async function claimFairly(
  db: Db,
  kind: string,
  now: number,
  leaseUntil: number,
  limit: number,
  shares: Shares,
): Promise<{ jobs: Job[]; after: string }> {
  const full = JSON.stringify(shares.full)
  const domains = (await db.all(DUE_DOMAINS, [kind, shares.after, now, full, limit])).map((r) => text(r[0]))
  const rooms = domains.map((d) => [d, Math.min(limit, shares.room(d))] as const).filter(([, room]) => room > 0)
  if (!rooms.length) return { jobs: [], after: shares.after }
  const [one] = rooms
  const rows =
    rooms.length === 1
      ? await db.all(CLAIM_ONE, [leaseUntil, one![0], kind, now, one![1]])
      : await db.all(CLAIM, [leaseUntil, JSON.stringify(rooms), kind, now, limit])
  const jobs = rows.map(toJob)
  // the round robin goes on after the last domain (in walk order) that got a job
  const served = new Set(jobs.map((j) => j.domain))
  const after = rooms.findLast(([d]) => served.has(d))?.[0] ?? shares.after
  return { jobs, after }
}
