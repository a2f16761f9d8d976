// The generic repository: every mutation and its journal record commit together, scoped by domain.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedDb } from '~storage/db-embedded'
import { openRemoteDb } from '~storage/db-remote'
import type { Db, SqlValue } from '~storage/db'
import { type Doc, MASKED } from '~storage/doc'
import type { WriteContext } from '~storage/journal'
import { migrate } from '~storage/migrate'
import { DuplicateError, Repository, type TableSpec } from '~storage/repository'

// one write transaction per call, as the service's write path (src/entities/unit.ts) makes them
const create = (repo: Repository, w: WriteContext, doc: Doc, hidden?: Record<string, SqlValue>) =>
  repo.db.write(() => repo.insert(w, doc, hidden))
const modify = (repo: Repository, w: WriteContext, id: string, change: Parameters<Repository['update']>[2]) =>
  repo.db.write(() => repo.update(w, id, change))
const remove = (repo: Repository, w: WriteContext, id: string) => repo.db.write(() => repo.remove(w, id))

const dir = mkdtempSync(join(tmpdir(), 'platform-repo-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const projects: TableSpec = { table: 'projects', objtype: 'project', columns: { code: 'code' } }
const users: TableSpec = {
  table: 'users',
  objtype: 'user',
  columns: { login: 'login' },
  hidden: { pwd_hash: 'pwd' },
  secrets: ['secret'],
}
const ctx = (domain: string, now = '2026-01-01T00:00:00.000Z'): WriteContext => ({
  domain,
  now,
  actor: { id: 'u1', name: 'Ann' },
  initiator: 'user',
  requestId: 'req-1',
})

async function journal(db: Db) {
  return (
    await db.all(
      'SELECT domain, cmdtype, objtype, objid, fields, obj, modifierid, modifiername, request_id FROM journal ORDER BY seq',
    )
  ).map(([domain, cmdtype, objtype, objid, fields, obj, modifierid, modifiername, request_id]) => ({
    domain,
    cmdtype,
    objtype,
    objid,
    fields,
    obj: JSON.parse(obj as string),
    modifierid,
    modifiername,
    request_id,
  }))
}

for (const [name, open] of [
  ['embedded', (f: string) => openEmbeddedDb(f)],
  ['remote (file:)', (f: string) => openRemoteDb(`file:${f}`)],
] as const) {
  describe(`Repository on ${name}`, () => {
    const fresh = async () => {
      const db = open(join(dir, `${crypto.randomUUID()}.db`))
      await migrate(db)
      return db
    }

    test('create stamps ext, stores the row and journals it in the same transaction', async () => {
      const db = await fresh()
      const repo = new Repository(db, projects)
      const doc = await create(repo, ctx('d1'), { id: 'p1', code: 'c1', name: 'One' })
      expect(doc).toEqual({
        id: 'p1',
        code: 'c1',
        name: 'One',
        ext: { ct: '2026-01-01T00:00:00.000Z', lwt: '2026-01-01T00:00:00.000Z' },
      })
      expect(await repo.get('d1', 'p1')).toEqual(doc)
      expect(await db.get('SELECT code, version FROM projects WHERE id = ?', ['p1'])).toEqual(['c1', 1])
      expect(await journal(db)).toEqual([
        {
          domain: 'd1',
          cmdtype: 'create',
          objtype: 'project',
          objid: 'p1',
          fields: null,
          obj: doc,
          modifierid: 'u1',
          modifiername: 'Ann',
          request_id: 'req-1',
        },
      ])
      await db.close()
    })

    test('update journals the changed fields in flat form; a no-op update writes nothing', async () => {
      const db = await fresh()
      const repo = new Repository(db, projects)
      await create(repo, ctx('d1'), { id: 'p1', code: 'c1', name: 'One', opts: { title: 't' } })
      const after = await modify(repo, ctx('d1', '2026-01-02T00:00:00.000Z'), 'p1', (d) => ({
        ...d,
        name: 'Uno',
        opts: { title: 't2', comment: 'c' },
      }))
      expect(after?.ext).toEqual({ ct: '2026-01-01T00:00:00.000Z', lwt: '2026-01-02T00:00:00.000Z' })
      const same = await modify(repo, ctx('d1', '2026-01-03T00:00:00.000Z'), 'p1', (d) => d)
      expect(same?.ext).toEqual(after?.ext)
      const records = await journal(db)
      expect(records.map((r) => [r.cmdtype, r.fields])).toEqual([
        ['create', null],
        ['update', 'name,opts.comment,opts.title'],
      ])
      expect(records[1]!.obj.name).toBe('Uno')
      expect(await db.get('SELECT version, lwt FROM projects')).toEqual([2, '2026-01-02T00:00:00.000Z'])
      await db.close()
    })

    test('a point read asked again before a write gets the same text and ETag; after a write, the new one', async () => {
      const db = await fresh()
      const repo = new Repository(db, projects)
      await create(repo, ctx('d1'), { id: 'p1', code: 'c1', name: 'One' })
      const first = (await repo.getJson('d1', 'p1'))!
      const again = (await repo.getJson('d1', 'p1'))!
      expect(JSON.parse(again.text)).toMatchObject({ id: 'p1', name: 'One' })
      expect(again.etag).toBe(first.etag)
      // only the embedded driver keeps rows until a write: the same object, hashed once
      if (name === 'embedded') expect(again).toBe(first)
      await modify(repo, ctx('d1'), 'p1', (d) => ({ ...d, name: 'Uno' }))
      const changed = (await repo.getJson('d1', 'p1'))!
      expect(JSON.parse(changed.text).name).toBe('Uno')
      expect(changed.etag).not.toBe(first.etag)
      expect(await repo.getJson('d2', 'p1')).toBeUndefined()
      if (name === 'embedded') {
        // kept, the answer comes without a promise: the row, and a missing row as missing
        expect(repo.getJson('d1', 'p1')).toBe(changed)
        expect(repo.getJson('d2', 'p1')).toBeUndefined()
        await modify(repo, ctx('d1'), 'p1', (d) => ({ ...d, name: 'Eins' }))
        const read = repo.getJson('d1', 'p1')
        expect(read).toBeInstanceOf(Promise) // a write let go of what was kept
        expect(JSON.parse((await read)!.text).name).toBe('Eins')
      }
      await db.close()
    })

    test('remove journals the object as it was before', async () => {
      const db = await fresh()
      const repo = new Repository(db, projects)
      const doc = await create(repo, ctx('d1'), { id: 'p1', code: 'c1', name: 'One' })
      expect(await remove(repo, ctx('d1'), 'p1')).toEqual(doc)
      expect(await repo.get('d1', 'p1')).toBeUndefined()
      expect(await remove(repo, ctx('d1'), 'p1')).toBeUndefined()
      expect((await journal(db)).map((r) => [r.cmdtype, r.obj])).toEqual([
        ['create', doc],
        ['delete', doc],
      ])
      await db.close()
    })

    test('every read and write is scoped by its domain', async () => {
      const db = await fresh()
      const repo = new Repository(db, projects)
      await create(repo, ctx('d1'), { id: 'p1', code: 'c1', name: 'One' })
      await create(repo, ctx('d2'), { id: 'p2', code: 'c1', name: 'Two' })
      expect(await repo.get('d2', 'p1')).toBeUndefined()
      expect(await modify(repo, ctx('d2'), 'p1', (d) => ({ ...d, name: 'hijack' }))).toBeUndefined()
      expect(await remove(repo, ctx('d2'), 'p1')).toBeUndefined()
      expect(await repo.lookup('d2', ['id', 'code'], ['c1'])).toEqual(['p2'])
      const all = { filter: null, order: [], offset: 0, limit: 10 }
      expect((await repo.list('d1', all)).map((d) => d.id)).toEqual(['p1'])
      expect((await repo.get('d1', 'p1'))?.name).toBe('One')
      await db.close()
    })

    test('a duplicate unique key names the field', async () => {
      const db = await fresh()
      const repo = new Repository(db, projects)
      await create(repo, ctx('d1'), { id: 'p1', code: 'c1', name: 'One' })
      const dupCode = await create(repo, ctx('d1'), { id: 'p2', code: 'c1', name: 'Two' }).catch((e) => e)
      expect(dupCode).toBeInstanceOf(DuplicateError)
      expect(dupCode.field).toBe('code')
      const dupId = await create(repo, ctx('d1'), { id: 'p1', code: 'c9', name: 'Two' }).catch((e) => e)
      expect(dupId.field).toBe('id')
      expect((await journal(db)).length).toBe(1)
      await db.close()
    })

    test('secrets are masked in the journal and hidden columns never reach the doc', async () => {
      const db = await fresh()
      const repo = new Repository(db, users)
      await create(repo, ctx('d1'), { id: 'u9', login: 'bob', secret: 'plain-secret' }, { pwd_hash: 'HASH1' })
      expect(await repo.getHidden('d1', 'u9')).toEqual({ pwd_hash: 'HASH1' })
      await modify(repo, ctx('d1'), 'u9', (d, hidden) => {
        hidden.pwd_hash = 'HASH2'
        return d
      })
      expect(await repo.getHidden('d1', 'u9')).toEqual({ pwd_hash: 'HASH2' })
      expect(await repo.get('d1', 'u9')).not.toHaveProperty('pwd')
      const records = await journal(db)
      expect(records[0]!.obj).toMatchObject({ secret: MASKED, pwd: MASKED })
      expect(records[1]!.fields).toBe('pwd')
      expect(records[1]!.obj.pwd).toBe(MASKED)
      expect(JSON.stringify(records)).not.toContain('HASH')
      expect(JSON.stringify(records)).not.toContain('plain-secret')
      await db.close()
    })

    test('when the journal insert fails, the entity write is rolled back', async () => {
      const db = await fresh()
      const repo = new Repository(db, projects)
      await create(repo, ctx('d1'), { id: 'p1', code: 'c1', name: 'One' })
      await db.run(
        "CREATE TRIGGER journal_down BEFORE INSERT ON journal BEGIN SELECT RAISE(ABORT, 'journal unavailable'); END",
      )
      await expect(create(repo, ctx('d1'), { id: 'p2', code: 'c2', name: 'Two' })).rejects.toThrow(
        'journal unavailable',
      )
      await expect(modify(repo, ctx('d1'), 'p1', (d) => ({ ...d, name: 'changed' }))).rejects.toThrow(
        'journal unavailable',
      )
      await expect(remove(repo, ctx('d1'), 'p1')).rejects.toThrow('journal unavailable')
      expect(await db.all('SELECT id, json_extract(doc, ?) FROM projects', ['$.name'])).toEqual([['p1', 'One']])
      await db.close()
    })
  })
}
