/**
 * The request the gateway hands the app for what it answers in-process (src/gateway/inline.ts):
 * a view of the head it scanned and the body it read, with the parts of a Request that the app and
 * Elysia read (method, url, headers, the body). Not a native Request: making one, and its Headers,
 * for every request cost a point read more than a third of its time (profiled under load).
 */
import type { ApiError } from '../errors'
import type { Answer } from './answer'
import type { Origin } from './req'

/** The headers of an inline request, by lower-case name, read as Headers reads them. */
export class InlineHeaders {
  constructor(private readonly byName: ReadonlyMap<string, string>) {}

  get(name: string): string | null {
    return this.byName.get(name.toLowerCase()) ?? null
  }

  has(name: string): boolean {
    return this.byName.has(name.toLowerCase())
  }

  forEach(each: (value: string, name: string) => void): void {
    for (const [name, value] of this.byName) each(value, name)
  }

  entries(): IterableIterator<[string, string]> {
    return this.byName.entries()
  }

  keys(): IterableIterator<string> {
    return this.byName.keys()
  }

  values(): IterableIterator<string> {
    return this.byName.values()
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.byName.entries()
  }

  toJSON(): Record<string, string> {
    return Object.fromEntries(this.byName)
  }

  getSetCookie(): string[] {
    return []
  }
}

const INLINE: Origin = { inline: true }

export class InlineRequest {
  readonly origin = INLINE
  refusal?: ApiError
  /** The app's answer, which the gateway writes itself (src/http/hooks/answers.ts). */
  answered?: Answer

  constructor(
    private meant: string,
    /** The method as the front passes it on (POST for a LOOKUP sent with the override header). */
    readonly wireMethod: string,
    readonly url: string,
    /** Made once for the header lines a connection keeps sending (src/gateway/inline.ts). */
    readonly headers: InlineHeaders,
    private readonly bytes: Buffer | null,
  ) {}

  get method(): string {
    return this.meant
  }

  /** Runs as `method` (an override read from its headers), or is refused with `refusal`. */
  mean(method: string, refusal?: ApiError): this {
    this.meant = method
    this.refusal ??= refusal
    return this
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.bytes ? (new Blob([this.bytes]).stream() as ReadableStream<Uint8Array>) : null
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.bytes
    return Promise.resolve(
      b ? (b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer) : new ArrayBuffer(0),
    )
  }

  async text(): Promise<string> {
    return this.bytes ? this.bytes.toString('utf8') : ''
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text())
  }

  /** What the app takes it as: a Request is what an app is given; this is read as one. */
  asRequest(): Request {
    return this as unknown as Request
  }
}

/** The inline request a Request given to the app is, if it is one. */
export const inlineOf = (request: Request): InlineRequest | null =>
  (request as unknown) instanceof InlineRequest ? (request as unknown as InlineRequest) : null
