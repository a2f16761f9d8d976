/** JSON already serialized: a stored doc passed through unparsed, a page kept as text. */

/** A strong validator of an answer's exact text. */
export const etagOf = (text: string) => `"${Bun.hash(text).toString(36)}"`

/** A JSON document already serialized, sent as it is. */
export class JsonText {
  private tag: string | undefined
  constructor(readonly text: string) {}

  /** Its ETag, hashed once however often the text is sent. */
  get etag(): string {
    this.tag ??= etagOf(this.text)
    return this.tag
  }
}
