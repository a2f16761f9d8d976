/** Request bodies: read within the configured size limit, then parsed as JSON. */
import { ApiError, badRequest, payloadTooLarge } from '../errors'

export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  try {
    return await readWithin(request, limit)
  } catch (err) {
    // the client (or the gateway, refusing its framing) closed the connection mid-body: a client error
    if ((err as Error)?.name === 'AbortError') throw badRequest('the request body ended before it was complete', 'body')
    throw err
  }
}

async function readWithin(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null) {
    if (Number(declared) > limit)
      throw payloadTooLarge(`request body is larger than the limit of ${limit} bytes`, 'body')
    return new Uint8Array(await request.arrayBuffer())
  }
  if (!request.body) return new Uint8Array(0)
  // chunked: count while reading, stop at the limit
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength
    if (total > limit) throw payloadTooLarge(`request body is larger than the limit of ${limit} bytes`, 'body')
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

const tooLarge = (limit: number) => payloadTooLarge(`request body is larger than the limit of ${limit} bytes`, 'body')

/**
 * The body as a stream, for routes that must not hold it in memory (uploads to disk). A declared
 * Content-Length over `limit` is refused before reading; otherwise bytes are counted as they pass and
 * the stream fails with a 413 once they exceed it, so a chunked body cannot get round the limit.
 */
export function streamBody(request: Request, limit: number): ReadableStream<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  if (!request.body) return new ReadableStream({ start: (c) => c.close() })
  const reader = request.body.getReader()
  let total = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await reader.read().catch((err: unknown) => {
        if ((err as Error)?.name === 'AbortError')
          throw badRequest('the request body ended before it was complete', 'body')
        throw err
      })
      if (next.done) return controller.close()
      total += next.value.byteLength
      if (total > limit) {
        void reader.cancel().catch(() => {})
        throw tooLarge(limit)
      }
      controller.enqueue(next.value)
    },
    cancel: (reason) => reader.cancel(reason),
  })
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** `application/json` and the `+json` types, with any parameters (charset). */
const JSON_MEDIA = /^application\/([\w.-]+\+)?json\s*(;|$)/i

/**
 * The parsed JSON body, or undefined when the body is empty. A body declared as something else
 * (a form, plain text) is a 415: it was not meant as JSON, so it is not guessed at. A body without
 * a Content-Type is read as JSON.
 */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const bytes = await readBodyBytes(request, limit)
  if (bytes.byteLength === 0) return undefined
  const type = request.headers.get('content-type')
  if (type !== null && !JSON_MEDIA.test(type.trim()))
    throw new ApiError(
      415,
      `request body must be JSON (Content-Type: application/json), not ${type.split(';')[0]!.trim() || 'an empty type'}`,
      { field: 'content-type' },
    )
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw badRequest('request body is not valid UTF-8', 'body')
  }
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text)
  } catch (err) {
    throw badRequest(`request body is not valid JSON: ${(err as Error).message}`, 'body')
  }
}
