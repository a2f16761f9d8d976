/**
 * The change journal: one record per create, update and delete, written by the repository in the
 * same transaction as the change itself. Its sequence number doubles as the outbox cursor for
 * events, websocket pushes and webhooks.
 */
import type { Db, Row, SqlValue, TxStep } from './db'
import { tx } from './db'
import type { Doc } from './doc'
import { compileFilter, compileOrder, jsonField, type FieldResolver, type ListQuery } from './query'
import { docOf, int, text, textOrNull } from './columns'

export type CmdType = 'create' | 'update' | 'delete'

/**
 * Through what a change was made: a user's HTTP call, a websocket frame, an integration channel, a
 * script, the service itself, the master domain.
 */
export type InitiatorType = 'user' | 'websocket' | 'integration' | 'script' | 'system' | 'master'

/** Who is writing, where, and when: passed to every mutation. */
export interface WriteContext {
  domain: string
  now: string
  actor: { id: string; name: string }
  initiator: InitiatorType
  requestId: string
  /** Where what this transaction journals is collected for the journal's followers (src/journal/recent.ts). */
  journaled?: JournalSink
}

/** What one transaction journaled, as the event pump reads it back; the write path hands it over once committed. */
export interface JournalSink {
  records: JournalChangeText[]
  /**
   * What the followers keep is not to be trusted after this transaction: it deleted journal records
   * (a domain's purge), or a record's seq was not known. They read the table instead.
   */
  untrusted: boolean
}

export interface JournalEntry {
  cmdtype: CmdType
  objtype: string
  objid: string
  fields?: string
  obj: Doc
  /** The object before an update (kept for events, not shown by the journal API). */
  prev?: Doc
}

export interface JournalRecord {
  seq: number
  cmdtype: CmdType
  dtutc: string
  modifierid: string
  modifiername: string
  objtype: string
  objid: string
  fields?: string
  obj: Doc
}

export function* appendJournal(w: WriteContext, e: JournalEntry): TxStep<void> {
  const obj = JSON.stringify(e.obj)
  const prev = e.prev ? JSON.stringify(e.prev) : null
  const { changes, lastRowid: seq } = yield* tx.run(
    `INSERT INTO journal (domain, dtutc, cmdtype, objtype, objid, modifierid, modifiername, fields, obj, prev, initiator, request_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      w.domain,
      w.now,
      e.cmdtype,
      e.objtype,
      e.objid,
      w.actor.id,
      w.actor.name,
      e.fields ?? null,
      obj,
      prev,
      w.initiator,
      w.requestId,
    ],
  )
  const sink = w.journaled
  if (!sink) return
  // the record as journalTextAfter reads it back (the columns of CHANGE_COLUMNS, in their order)
  const row = [seq, w.domain, w.now, e.cmdtype, e.objtype, e.objid, obj, prev, w.actor.id, w.initiator]
  if (changes === 1 && seq > 0) sink.records.push(changeTextOf(row))
  else sink.untrusted = true
}

/** Removes a domain's journal and its retention horizon (the domain is being deleted). */
export function* purgeJournal(domain: string): TxStep<void> {
  const chunk = 'DELETE FROM journal WHERE seq IN (SELECT seq FROM journal WHERE domain = ? LIMIT 500)'
  while ((yield* tx.run(chunk, [domain])).changes === 500); // short statements: long work pauses between them
  yield* tx.run('DELETE FROM journal_horizons WHERE domain = ?', [domain])
}

/** A journal record as the event pump reads it. */
export interface JournalChange {
  seq: number
  domain: string
  dtutc: string
  cmdtype: CmdType
  objtype: string
  objid: string
  obj: Doc
  prev: Doc | null
  modifierid: string
  initiator: InitiatorType
}

const CHANGE_COLUMNS = 'seq, domain, dtutc, cmdtype, objtype, objid, obj, prev, modifierid, initiator'

/** A journal record whose obj and prev are still their stored JSON text. */
export type JournalChangeText = Omit<JournalChange, 'obj' | 'prev'> & { obj: string; prev: string | null }

/**
 * Journal records after `seq`, oldest first, across all domains, obj and prev as stored: the event
 * pump passes them on without parsing them.
 */
export async function journalTextAfter(db: Db, seq: number, limit: number): Promise<JournalChangeText[]> {
  const rows = await db.all(`SELECT ${CHANGE_COLUMNS} FROM journal WHERE seq > ? ORDER BY seq LIMIT ?`, [seq, limit])
  return rows.map(changeTextOf)
}

/**
 * The seq and domain of the journal records after `seq`, oldest first: what a consumer that needs
 * the records of some domains only reads first (their bodies are most of what reading one costs).
 */
export async function journalDomainsAfter(
  db: Db,
  seq: number,
  limit: number,
): Promise<{ seq: number; domain: string }[]> {
  const rows = await db.all('SELECT seq, domain FROM journal WHERE seq > ? ORDER BY seq LIMIT ?', [seq, limit])
  return rows.map(([seq, domain]) => ({ seq: int(seq), domain: text(domain) }))
}

/** The journal records of one domain with a seq in (after, upTo], oldest first. */
export async function domainJournalBetween(
  db: Db,
  domain: string,
  after: number,
  upTo: number,
): Promise<JournalChange[]> {
  const sql = `SELECT ${CHANGE_COLUMNS} FROM journal WHERE domain = ? AND seq > ? AND seq <= ? ORDER BY seq`
  return (await db.all(sql, [domain, after, upTo])).map(changeOf)
}

/** Journal records of one domain (of one object type, when given) after `seq`, oldest first: a subscriber resuming. */
export async function domainJournalAfter(
  db: Db,
  domain: string,
  seq: number,
  limit: number,
  objtype?: string,
): Promise<JournalChange[]> {
  const byType = objtype === undefined ? '' : 'AND objtype = ?'
  const args = objtype === undefined ? [domain, seq, limit] : [domain, objtype, seq, limit]
  const sql = `SELECT ${CHANGE_COLUMNS} FROM journal WHERE domain = ? ${byType} AND seq > ? ORDER BY seq LIMIT ?`
  return (await db.all(sql, args)).map(changeOf)
}

/** The first and last sequence numbers the journal holds (0 and 0 when it is empty). */
export async function journalBounds(db: Db): Promise<{ first: number; last: number }> {
  const row = await db.get('SELECT COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0) FROM journal')
  return { first: int(row![0]), last: int(row![1]) }
}

function changeTextOf([seq, domain, dtutc, cmdtype, objtype, objid, obj, prev, modifierid, initiator]: Row) {
  return {
    seq: int(seq),
    domain: text(domain),
    dtutc: text(dtutc),
    cmdtype: cmdtype as CmdType,
    objtype: text(objtype),
    objid: text(objid),
    obj: text(obj),
    prev: textOrNull(prev),
    modifierid: text(modifierid),
    initiator: initiator as InitiatorType,
  } satisfies JournalChangeText
}

function changeOf(row: Row): JournalChange {
  return parsedChange(changeTextOf(row))
}

/** A journal record with its obj and prev parsed. */
export function parsedChange(change: JournalChangeText): JournalChange {
  const prev = change.prev === null ? null : (JSON.parse(change.prev) as Doc)
  return { ...change, obj: JSON.parse(change.obj) as Doc, prev }
}

/**
 * The position of a consumer in the journal. A new consumer starts at the end (no history replay),
 * or where the consumer `startFrom` stands (one that takes over part of that one's work).
 */
export async function journalCursor(db: Db, name: string, startFrom?: string): Promise<number> {
  const row = await db.get('SELECT seq FROM journal_cursors WHERE name = ?', [name])
  if (row) return int(row[0])
  const from =
    startFrom === undefined ? undefined : await db.get('SELECT seq FROM journal_cursors WHERE name = ?', [startFrom])
  const start = (from ?? (await db.get('SELECT COALESCE(MAX(seq), 0) FROM journal')))![0] as number
  await db.run('INSERT OR IGNORE INTO journal_cursors (name, seq) VALUES (?, ?)', [name, start])
  return (await db.get('SELECT seq FROM journal_cursors WHERE name = ?', [name]))![0] as number
}

/** A write like the others: on the embedded driver it joins the group commit of the turn it is asked in. */
export async function moveJournalCursor(db: Db, name: string, seq: number): Promise<void> {
  await db.write(() => moveCursor(name, seq))
}

/** The cursor moved forward to `seq`, inside a write that does what reading up to there asked for. */
export function* moveCursor(name: string, seq: number): TxStep<void> {
  yield* tx.run('UPDATE journal_cursors SET seq = ? WHERE name = ? AND seq < ?', [seq, name, seq])
}

/** Search conditions of GET /journal/changes, already validated. */
export interface JournalSearch {
  dtstart?: string
  dtstop?: string
  cmdtype?: CmdType
  objtype?: string
  objid?: string
  offset: number
  limit: number
}

const COLUMNS = new Set(['cmdtype', 'dtutc', 'modifierid', 'modifiername', 'objtype', 'objid', 'fields'])

export const resolveJournalField: FieldResolver = (path) => {
  if (COLUMNS.has(path)) return path
  if (path === 'obj') return 'obj'
  if (path.startsWith('obj.')) return jsonField('obj', path.slice(4))
  throw new Error(`journal has no field ${path}`)
}

/**
 * Records matching the search, then the caller's filter, order and paging applied to those.
 * The search's own offset/limit select the found set; the list query pages within it.
 */
export async function searchJournal(
  db: Db,
  domain: string,
  search: JournalSearch,
  q: ListQuery,
): Promise<JournalRecord[]> {
  const args: SqlValue[] = [domain]
  const where = ['domain = ?']
  const conditions = [
    ['dtutc >= ?', search.dtstart],
    ['dtutc <= ?', search.dtstop],
    ['cmdtype = ?', search.cmdtype],
    ['objtype = ?', search.objtype],
    ['objid = ?', search.objid],
  ] as const
  for (const [condition, value] of conditions) {
    if (!value) continue
    where.push(condition)
    args.push(value)
  }
  // without a filter or an order of its own the outer list is a prefix of the found set: reading
  // more of it than that prefix would only be thrown away (a thousand records of an object, say)
  const prefixOnly = !q.filter && q.order.length === 0
  args.push(prefixOnly ? Math.min(search.limit, q.offset + q.limit) : search.limit, search.offset)
  const found = `SELECT * FROM journal WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ? OFFSET ?`
  const outer = q.filter ? `WHERE ${compileFilter(q.filter, resolveJournalField, args, domain)}` : ''
  args.push(q.limit, q.offset)
  const rows = await db.all(
    `SELECT seq, cmdtype, dtutc, modifierid, modifiername, objtype, objid, fields, obj FROM (${found}) ${outer}
     ORDER BY ${compileOrder(q.order, resolveJournalField, 'seq')} LIMIT ? OFFSET ?`,
    args,
  )
  return rows.map(([seq, cmdtype, dtutc, modifierid, modifiername, objtype, objid, fields, obj]) => ({
    seq: int(seq),
    cmdtype: cmdtype as CmdType,
    dtutc: text(dtutc),
    modifierid: text(modifierid),
    modifiername: text(modifiername),
    objtype: text(objtype),
    objid: text(objid),
    ...(fields === null ? {} : { fields: text(fields) }),
    obj: docOf(obj),
  }))
}
