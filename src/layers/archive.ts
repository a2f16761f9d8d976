/**
 * Product-layer archives: zip files in DATA_DIR/layers named `<prefix>…zip`, holding JSON files
 * under `classes/`, `svcscripts/`, `extobjs/` and `settings/` (each file one object or an array).
 * Everything is read and checked before anything is applied.
 */
import { unzipSync } from 'fflate'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { isPlainObject, type Doc } from '~storage/doc'

export const KINDS = ['classes', 'svcscripts', 'extobjs', 'settings'] as const
export type Kind = (typeof KINDS)[number]
export type LayerContent = Record<Kind, { file: string; doc: Doc }[]>

export class LayerError extends Error {}

/**
 * What an archive may hold once inflated. Its entries are inflated into buffers of their declared
 * sizes, so past this (a zip bomb: 1.46 MB of zip holding 1.5 GB) nothing is inflated at all; an
 * entry whose data outruns its declared size is cut there, and fails as JSON.
 */
export const MAX_INFLATED_BYTES = 256 * 1024 * 1024

/** The lexicographically greatest archive whose name starts with `prefix`, or null. */
export function latestArchive(dir: string, prefix: string): string | null {
  let names: string[] = []
  try {
    names = readdirSync(dir)
  } catch {
    return null
  }
  const matching = names.filter((n) => n.startsWith(prefix) && n.endsWith('.zip')).sort()
  return matching.at(-1) ?? null
}

export function md5(bytes: Uint8Array): string {
  return new Bun.CryptoHasher('md5').update(bytes).digest('hex').toUpperCase()
}

export async function readArchive(dir: string, file: string): Promise<{ bytes: Uint8Array; content: LayerContent }> {
  const bytes = new Uint8Array(await Bun.file(join(dir, file)).arrayBuffer())
  let entries: Record<string, Uint8Array>
  let declared = 0
  try {
    entries = unzipSync(bytes, {
      filter: (entry) => {
        declared += entry.originalSize
        return declared <= MAX_INFLATED_BYTES
      },
    })
  } catch (err) {
    throw new LayerError(`${file} is not a readable zip archive: ${(err as Error).message}`)
  }
  if (declared > MAX_INFLATED_BYTES)
    throw new LayerError(`${file} holds more than ${MAX_INFLATED_BYTES} bytes once inflated`)
  const content: LayerContent = { classes: [], svcscripts: [], extobjs: [], settings: [] }
  for (const [path, data] of Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (path.endsWith('/')) continue
    const kind = KINDS.find((k) => path.startsWith(`${k}/`))
    if (!kind) {
      if (path.endsWith('.json') && path !== 'layer.json')
        throw new LayerError(`${path}: files go under ${KINDS.map((k) => `${k}/`).join(', ')}`)
      continue
    }
    if (!path.endsWith('.json')) throw new LayerError(`${path}: only .json files are read`)
    let parsed: unknown
    try {
      parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data))
    } catch (err) {
      throw new LayerError(`${path}: not valid JSON: ${(err as Error).message}`)
    }
    const items = Array.isArray(parsed) ? parsed : [parsed]
    items.forEach((doc, i) => {
      if (!isPlainObject(doc))
        throw new LayerError(`${path}${items.length > 1 ? ` item ${i}` : ''}: expected a JSON object`)
      content[kind].push({ file: items.length > 1 ? `${path} item ${i}` : path, doc })
    })
  }
  return { bytes, content }
}
