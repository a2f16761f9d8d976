/**
 * Request bodies: read within a route's size limit (the listeners set none of their own, so every
 * refusal is the service's JSON error), then parsed as JSON or streamed; after the answer, what the
 * client still sends of a body nobody read is dropped within bounds (`settle`).
 */
import { ApiError, badRequest, payloadTooLarge } from '../errors'

/** What a body is read from: a Request. */
type BodySource = Pick<Request, 'headers' | 'body' | 'arrayBuffer'>

/**
 * A lingering close: what is still read, and dropped, of a body answered before it was read whole
 * (a 413, a 401 to an upload), so a client that writes its whole body before reading gets the
 * answer instead of a connection reset. Past either bound the connection is closed after the answer.
 */
export const LINGER = { ms: 2000, bytes: 64 * 1024 * 1024 }

const tooLarge = (limit: number) => payloadTooLarge(`request body is larger than the limit of ${limit} bytes`, 'body')
/** The client (or the gateway, refusing its framing) closed the connection mid-body: a client error. */
const cutShort = () => badRequest('the request body ended before it was complete', 'body')
const isAbort = (err: unknown) => (err as Error)?.name === 'AbortError'

/** One HTTP request's body, read once, through this object only (it knows how much is left). */
export class RequestBody {
  private reader: ReadableStreamDefaultReader<Uint8Array> | null = null
  private consumed = 0
  private ended = false

  /**
   * `allowance`: the largest body any route takes. A declared rest up to it (or LINGER.bytes) is
   * what the client could send in an accepted request anyway, so it is dropped whole.
   */
  constructor(
    private readonly request: BodySource,
    private readonly allowance: number,
  ) {}

  private declared(): number | null {
    const v = this.request.headers.get('content-length')
    return v === null ? null : Number(v)
  }

  /** The next chunk, or null at the end of the body. */
  private async next(): Promise<Uint8Array | null> {
    if (this.ended) return null
    if (!this.reader) {
      if (!this.request.body) return this.end()
      this.reader = this.request.body.getReader() as ReadableStreamDefaultReader<Uint8Array>
    }
    let next: { done: boolean; value?: Uint8Array }
    try {
      next = await this.reader.read()
    } catch (err) {
      this.ended = true // the connection is gone: nothing is left to settle
      throw isAbort(err) ? cutShort() : err
    }
    if (next.done || !next.value) return this.end()
    this.consumed += next.value.byteLength
    return next.value
  }

  private end(): null {
    this.ended = true
    return null
  }

  /** The whole body, or a 413 past `limit` (a declared length is refused before reading). */
  async bytes(limit: number): Promise<Uint8Array> {
    const declared = this.declared()
    if (declared !== null && declared > limit) throw tooLarge(limit)
    if (declared !== null && !this.reader) {
      try {
        return new Uint8Array(await this.request.arrayBuffer())
      } catch (err) {
        throw isAbort(err) ? cutShort() : err
      } finally {
        this.ended = true
      }
    }
    // chunked: count while reading, stop at the limit
    const chunks: Uint8Array[] = []
    let total = 0
    for (let c = await this.next(); c; c = await this.next()) {
      total += c.byteLength
      if (total > limit) throw tooLarge(limit)
      chunks.push(c)
    }
    return Buffer.concat(chunks)
  }

  /**
   * The body as a stream, for routes that must not hold it in memory (uploads to disk). A declared
   * length over `limit` is refused before reading; otherwise bytes are counted as they pass and the
   * stream fails with a 413 once they exceed it, so a chunked body cannot get round the limit.
   * Cancelling it leaves the rest of the body to `settle`.
   */
  stream(limit: number): ReadableStream<Uint8Array> {
    const declared = this.declared()
    if (declared !== null && declared > limit) throw tooLarge(limit)
    let total = 0
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const chunk = await this.next()
        if (!chunk) return controller.close()
        total += chunk.byteLength
        if (total > limit) throw tooLarge(limit)
        controller.enqueue(chunk)
      },
    })
  }

  /**
   * Called with the answer decided: drops what is left of the body within LINGER. True when the
   * connection may stay open; false when it must close after the answer (the body did not end
   * within the bounds). A declared rest within the allowance is left to Bun, which drops it unread
   * and keeps the connection. Synchronous when nothing is left to drop (a request without a body):
   * the hot path's answers wait for no promise of it.
   */
  settle(): boolean | Promise<boolean> {
    if (this.ended) return true
    const declared = this.declared()
    if (
      declared === null
        ? this.request.headers.get('transfer-encoding') === null
        : declared - this.consumed <= Math.max(this.allowance, LINGER.bytes)
    )
      return true
    return this.drain()
  }

  /** Drops the rest of the body within LINGER: true when it ended. */
  private async drain(): Promise<boolean> {
    const start = this.consumed
    let timer: Timer | undefined
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), LINGER.ms)
    })
    try {
      while (this.consumed - start <= LINGER.bytes) {
        const next = await Promise.race([this.next(), late])
        if (next === 'late') return false
        if (next === null) return true
      }
      return false
    } catch {
      return true // the client went away while we read: nothing to keep open or to protect
    } finally {
      clearTimeout(timer)
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** `application/json` and the `+json` types, with any parameters (charset). */
const JSON_MEDIA = /^application\/([\w.-]+\+)?json\s*(;|$)/i

/**
 * What the `jsonBody` parser (src/http/route-base.ts) gives for a request without a body: Elysia parses the body again its own
 * way when a parser gives undefined. Admission (at transform, before validation) makes it undefined.
 */
export const NO_BODY = Symbol('no body')

/**
 * The parsed JSON body, or undefined when the body is empty. A body declared as something else
 * (a form, plain text) is a 415: it was not meant as JSON, so it is not guessed at. A body without
 * a Content-Type is read as JSON.
 */
export async function readJsonBody(request: BodySource, body: RequestBody, limit: number): Promise<unknown> {
  const bytes = await body.bytes(limit)
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
