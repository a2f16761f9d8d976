/** JSON already serialized: a stored doc passed through unparsed, a page kept as text. */

/** A strong validator of an answer's exact text. */
export const etagOf = (text: string) => `"${Bun.hash(text).toString(36)}"`

/** A JSON document already serialized, sent as it is. */
export class JsonText {
  private size = -1
  /**
   * `tag`: the version's own, where the text adds live figures that are no part of it (a channel's
   * file figures, a task's next run). Such a text is `live`: the tag says which version it shows,
   * not that two texts are the same, so it answers no 304.
   */
  readonly live: boolean
  constructor(
    readonly text: string,
    private tag?: string,
  ) {
    this.live = tag !== undefined
  }

  /** Its length in UTF-8, counted once however often the text is sent. */
  get bytes(): number {
    if (this.size < 0) this.size = Buffer.byteLength(this.text)
    return this.size
  }

  /** Its ETag, hashed once however often the text is sent. */
  get etag(): string {
    this.tag ??= etagOf(this.text)
    return this.tag
  }
}
