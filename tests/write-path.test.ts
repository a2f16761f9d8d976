// One write path: SQL that writes an entity table (a table of the registry, a model class's record
// table, or a table whose name is spliced in) appears in storage/repository.ts and nowhere else, so
// every write goes through the repository and commits with its journal record.
import { describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { join } from 'node:path'
import { tables } from '~/entities/registry'

const root = join(import.meta.dir, '..')
const SCANNED = ['src', 'storage', 'routes', 'scripts', 'bench', 'tests']
/** Files that may hold such statements, and why. */
const ALLOWED: Record<string, string> = {
  'storage/repository.ts': 'the one write path',
  'tests/write-path.test.ts': "the scanner's own examples of what it forbids",
  'tests/storage/migration-0023.test.ts': 'rows as the schema before a migration stored them, to migrate',
  'tests/ops/file-secrets.test.ts': 'a signing secret as a version before sealing stored it, to seal',
}
const entityTables = new Set(tables().map((s) => s.table))

/** Whitespace in SQL text, including the escapes \n \r \t that become whitespace in a string literal. */
const WS = String.raw`(?:\s|\\[nrt])`
/**
 * A writing statement and the table it names: INSERT [OR x] INTO, REPLACE INTO, UPDATE [OR x] <t>
 * SET, DELETE FROM. The table may be quoted, schema-qualified or interpolated (`${...}`); an empty
 * name right before the end of a string literal means the name is joined on with `+`.
 */
const WRITE = new RegExp(
  String.raw`\b(INSERT(?:${WS}+OR${WS}+\w+)?${WS}+INTO|REPLACE${WS}+INTO|UPDATE(?:${WS}+OR${WS}+\w+)?|DELETE${WS}+FROM)` +
    String.raw`${WS}+(?:main\.)?["[]?((?:[A-Za-z_]\w*)?(?:\$\{[^}]*\}\w*)*)["\]]?(${WS}+SET\b|${WS}*['"\x60])?`,
  'gi',
)

interface Finding {
  line: number
  statement: string
  table: string
  /** Why the table counts as an entity table; undefined when it does not. */
  kind?: 'registry table' | 'model record table' | 'interpolated table name' | 'table name joined on'
}

/** The writing statements of a source text, each with the table it writes and whether that is an entity table. */
function scan(text: string): Finding[] {
  const out: Finding[] = []
  for (const m of text.matchAll(WRITE)) {
    const [whole, verb, name, after] = m as unknown as [string, string, string, string | undefined]
    const isUpdate = /^UPDATE/i.test(verb)
    const set = after !== undefined && /SET$/i.test(after)
    if (isUpdate && !set) continue // prose: "update the ..."
    let kind: Finding['kind']
    if (name === '') {
      if (after === undefined || set) continue
      kind = 'table name joined on'
    } else if (name.includes('${')) kind = 'interpolated table name'
    else if (/^rec_/i.test(name)) kind = 'model record table'
    else if (entityTables.has(name.toLowerCase())) kind = 'registry table'
    const line = text.slice(0, m.index).split('\n').length
    const statement = whole.replace(new RegExp(`${WS}+`, 'g'), ' ').replace(/\s*['"`]$/, '')
    out.push({ line, statement, table: name || '(joined on)', kind })
  }
  return out
}

const sourceFiles = () =>
  SCANNED.flatMap((dir) =>
    [...new Glob('**/*.ts').scanSync({ cwd: join(root, dir) })]
      .filter((f) => !f.split('/').includes('node_modules'))
      .map((f) => `${dir}/${f}`),
  ).sort()

describe('the scanner', () => {
  test('recognizes every form of writing statement on an entity table', () => {
    const cases: [string, Finding['kind']][] = [
      ["db.run('INSERT INTO users (id) VALUES (?)')", 'registry table'],
      ["tx.run('insert or replace into projects VALUES (1)')", 'registry table'],
      ['tx.run("REPLACE INTO extobjs VALUES (1)")', 'registry table'],
      ["tx.run('UPDATE settings SET doc = ?')", 'registry table'],
      ['tx.run(`UPDATE OR IGNORE "roles"\n  SET doc = ?`)', 'registry table'],
      [String.raw`tx.run('DELETE\nFROM groups')`, 'registry table'],
      ['tx.run(`UPDATE ${t}\\n  SET doc = ?`)', 'interpolated table name'],
      ["tx.run('DELETE FROM main.users_caches WHERE domain = ?')", 'registry table'],
      ['tx.run(`DELETE FROM rec_0192a3b4_0192a3b5 WHERE id = ?`)', 'model record table'],
      ['tx.run(`DELETE FROM ${table} WHERE id = ?`)', 'interpolated table name'],
      ['tx.run(`UPDATE rec_${d}_${c} SET doc = ?`)', 'interpolated table name'],
      ["tx.run('DELETE FROM ' + spec.table)", 'table name joined on'],
    ]
    for (const [text, kind] of cases) expect([text, scan(text).map((f) => f.kind)]).toEqual([text, [kind]])
  })

  test('leaves reads, other tables and prose alone', () => {
    for (const text of [
      "db.all('SELECT doc FROM users WHERE domain = ?')",
      "tx.run('INSERT INTO journal (domain) VALUES (?)')",
      "tx.run('DELETE FROM queue WHERE domain = ?')",
      '// update the users of a group, then delete from the caches',
      'CREATE TABLE IF NOT EXISTS ${table} (domain TEXT)',
    ])
      expect([text, scan(text).filter((f) => f.kind)]).toEqual([text, []])
  })

  test('sees the statements of the repository itself', async () => {
    const found = scan(await Bun.file(join(root, 'storage/repository.ts')).text()).filter((f) => f.kind)
    const verbs = new Set(found.map((f) => f.statement.split(' ')[0]!.toUpperCase()))
    expect([...verbs].sort()).toEqual(['DELETE', 'INSERT', 'UPDATE'])
  })
})

test('SQL writes an entity table only in storage/repository.ts', async () => {
  const files = sourceFiles()
  expect(files).toContain('storage/repository.ts')
  expect(files).toContain('tests/helpers/service.ts')
  const violations: string[] = []
  for (const file of files) {
    if (file in ALLOWED) continue
    for (const f of scan(await Bun.file(join(root, file)).text()))
      if (f.kind) violations.push(`${file}:${f.line}: ${f.statement} writes ${f.table} (${f.kind})`)
  }
  expect(violations).toEqual([])
})
