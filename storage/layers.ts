/** Product-layer operations of a domain: one row per operation, its state in the doc. */
import type { Db } from './db'
import { tx } from './db'
import type { Doc } from './doc'

export async function insertLayerOperation(db: Db, domain: string, doc: Doc): Promise<void> {
  await db.run('INSERT INTO product_layers (domain, id, doc, ct, lwt, version) VALUES (?, ?, ?, ?, ?, 1)', [
    domain,
    doc.id as string,
    JSON.stringify(doc),
    doc.dt as string,
    doc.dt as string,
  ])
}

export async function updateLayerOperation(db: Db, domain: string, doc: Doc, at: string): Promise<void> {
  await db.run('UPDATE product_layers SET doc = ?, lwt = ?, version = version + 1 WHERE domain = ? AND id = ?', [
    JSON.stringify(doc),
    at,
    domain,
    doc.id as string,
  ])
}

/** Every operation of a domain, oldest first. */
export async function layerOperations(db: Db, domain: string): Promise<Doc[]> {
  const rows = await db.all('SELECT doc FROM product_layers WHERE domain = ? ORDER BY id', [domain])
  return rows.map((r) => JSON.parse(r[0] as string) as Doc)
}

/** Writes the kind and order each operation shows in the listing. */
export async function relabelLayerOperations(
  db: Db,
  domain: string,
  labels: { id: string; kind: string; order: number }[],
): Promise<void> {
  await db.write(function* () {
    for (const l of labels) {
      yield* tx.run(
        `UPDATE product_layers SET doc = json_set(doc, '$.kind', ?, '$.order', ?) WHERE domain = ? AND id = ?`,
        [l.kind, l.order, domain, l.id],
      )
    }
  })
}
