/**
 * Channel files (/rest/v1/fs/targets/token): a flat directory of files per domain, on local disk
 * under DATA_DIR/files/<domain id>/. Uploads stream from the socket to disk (multipart.ts, never
 * `formData()`), within FILES_MAX_BYTES per request rather than MAX_BODY_BYTES; downloads stream
 * from disk. Its routes, and who may use them (`filesContext`), are ./files-api.ts.
 */
import { domainFilesDir, removeDomainFiles } from '~storage/files'
import type { Ctx } from '../context'
import { DEFAULT_LIMITS } from '../entities/entity'
import { badRequest, domainGone } from '../errors'
import { FieldSet } from '../query/fields'

const FIELDS = new FieldSet(['name', 'size', 'last_modified'])
export const listShape = { fields: FIELDS, output: FIELDS, limits: DEFAULT_LIMITS }

const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i

/** Why a name cannot be a file name, or null when it can. Names are compared in Unicode NFC. */
export function nameProblem(name: string): string | null {
  if (name === '') return 'a file name is not empty'
  if (Buffer.byteLength(name) > 255) return 'a file name is at most 255 bytes'
  if (/[/\\]/.test(name)) return 'a file name holds no / or \\ (files are not in folders)'
  // NUL and the C0/C1 control characters: never part of a name a client means
  // biome-ignore lint/suspicious/noControlCharactersInRegex: file names with control characters are refused
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'a file name holds no control characters or NUL'
  if (name.startsWith('.')) return 'a file name does not start with a dot (no ., .., hidden or temporary names)'
  if (name.trim() !== name) return 'a file name does not start or end with a space'
  if (RESERVED.test(name)) return `${name} is a reserved device name`
  return null
}

/** The name of a path parameter, in NFC, or a 400 naming `name`. */
export function fileName(raw: string | undefined): string {
  const name = (raw ?? '').normalize('NFC')
  const problem = nameProblem(name)
  if (problem) throw badRequest(`name: ${problem}`, 'name')
  return name
}

export const contentTypeOf = (name: string) => Bun.file(name).type || 'application/octet-stream'

/** RFC 6266: a quoted ASCII `filename`, and for other names also `filename*` (RFC 5987, UTF-8). */
export function attachmentDisposition(name: string): string {
  const ascii = /^[\x20-\x7e]*$/.test(name)
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '\\$&')
  if (ascii) return `attachment; filename="${fallback}"`
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the spec's `last_modified`. */
export const listTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')

export const dirOf = (ctx: Ctx) => domainFilesDir(ctx.deps.config.dataDir, ctx.domain)

/**
 * Writes into the domain's directory. A deletion of the domain may overtake an upload in flight (it
 * waits for requests a few seconds only) and remove the directory: the write then fails, or made the
 * directory again. Either way the answer is that of a domain gone, and nothing of it stays.
 */
export async function written<T>(ctx: Ctx, write: () => Promise<T>): Promise<T> {
  let result: T
  try {
    result = await write()
  } catch (err) {
    const vanished = (err as NodeJS.ErrnoException)?.code === 'ENOENT'
    if (!vanished && (await ctx.deps.access.domainInfo(ctx.domain))) throw err
    throw domainGone(ctx)
  }
  if (await ctx.deps.access.domainInfo(ctx.domain)) return result
  await removeDomainFiles(ctx.deps.config.dataDir, ctx.domain)
  throw domainGone(ctx)
}

export async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader()
  for (;;) {
    const next = await reader.read()
    if (next.done) return
    yield next.value
  }
}

export async function drainSize(chunks: AsyncIterable<Uint8Array>): Promise<number> {
  let size = 0
  for await (const c of chunks) size += c.byteLength
  return size
}
