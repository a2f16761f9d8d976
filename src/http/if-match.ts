/**
 * If-Match: a change applies only to the version the caller read (the ETag its GET carried, or the
 * one its last write answered), otherwise 412 naming If-Match. Writes check it on the entity as their
 * transaction finds it, so of writers sending the same tag at once exactly one wins: a check before
 * the transaction let several pass before any of them wrote.
 */
import type { Doc } from '~storage/doc'
import { etagOf, JsonText } from '~storage/json-text'
import { ApiError } from '../errors'
import type { Req } from './req'

/** Throws 412 unless the request's If-Match names the tag `now`; undefined when it sets no condition (absent or `*`). */
export function ifMatchTag(req: Req, what: string): ((now: string) => void) | undefined {
  const wanted = req.header('if-match')
  if (wanted === null || wanted.trim() === '*') return undefined
  return (now) => {
    if (!wanted.split(',').some((tag) => tag.trim() === now))
      throw new ApiError(412, `${what} changed since it was read (If-Match ${wanted}, now ${now})`, {
        field: 'If-Match',
      })
  }
}

/**
 * The same for a document GET answers as stored: its text is the stored JSON, which parses and
 * prints back the same, so the tag is that of the doc printed again.
 */
export function ifMatchDoc(req: Req, what: string): ((current: Doc) => void) | undefined {
  const refuse = ifMatchTag(req, what)
  return refuse && ((current) => refuse(etagOf(JSON.stringify(current))))
}

/**
 * The answer of a write (POST, PUT, PATCH) that answers the object whole: its text, with the ETag of
 * that text, which is the tag a GET of the object then answers (GET sends the same text), so the
 * caller's next change can carry If-Match without reading the object again.
 */
export function newVersion(req: Req, doc: unknown, live?: readonly string[]): JsonText {
  const json = versionText(doc, live)
  req.headers.etag = json.etag
  return json
}

/** A doc's text and its tag: the tag of the doc without its `live` members when it has any. */
export function versionText(doc: unknown, live?: readonly string[]): JsonText {
  const text = JSON.stringify(doc)
  return live?.length ? new JsonText(text, versionTag(doc as Doc, live)) : new JsonText(text)
}

/** The tag of a version: of the doc as GET shows it, less the members that change with the time. */
export function versionTag(doc: Doc, live?: readonly string[]): string {
  if (!live?.length) return etagOf(JSON.stringify(doc))
  const kept: Doc = {}
  for (const [name, value] of Object.entries(doc)) if (!live.includes(name)) kept[name] = value
  return etagOf(JSON.stringify(kept))
}
