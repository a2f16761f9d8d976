/** JSON responses with the service's content type and request id. */

export const JSON_TYPE = 'application/json; charset=utf-8'

/** A strong validator of an answer's exact text. */
export const etagOf = (text: string) => `"${Bun.hash(text).toString(36)}"`

/** A JSON document already serialized (a stored doc passed through unparsed, a page kept as text). */
export class JsonText {
  private tag: string | undefined
  constructor(readonly text: string) {}

  /** Its ETag, hashed once however often the text is sent. */
  get etag(): string {
    this.tag ??= etagOf(this.text)
    return this.tag
  }
}

export function jsonResponse(body: unknown, status: number, headers: Record<string, string>): Response {
  const text = body instanceof JsonText ? body.text : JSON.stringify(body)
  return new Response(text, { status, headers: { 'content-type': JSON_TYPE, ...headers } })
}
