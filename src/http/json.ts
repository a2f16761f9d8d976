/** JSON responses with the service's content type and request id. */
import { JsonText } from '~storage/json-text'

export const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * A list page as the text HTTP sends, made once per page and presentation (`presented`: all that
 * shapes the items: the collection or the class as defined now, the mask and flat as parsed).
 * Storage keeps a page's docs until the next write, so a page read again comes with the same docs:
 * its text is kept by them, and goes when they go.
 */
const pageTexts = new WeakMap<object, Map<string, JsonText>>()
/** Presentations kept per page: a client varying its mask gets new texts, not more memory. */
const PRESENTATIONS_MAX = 8
export function pageText(docs: object, presented: string, items: () => unknown[]): JsonText {
  let texts = pageTexts.get(docs)
  if (!texts) {
    texts = new Map()
    pageTexts.set(docs, texts)
  }
  let text = texts.get(presented)
  if (!text) {
    if (texts.size >= PRESENTATIONS_MAX) texts.clear()
    text = new JsonText(JSON.stringify(items()))
    texts.set(presented, text)
  }
  return text
}

export function jsonResponse(body: unknown, status: number, headers: Record<string, string>): Response {
  const text = body instanceof JsonText ? body.text : JSON.stringify(body)
  return new Response(text, { status, headers: { 'content-type': JSON_TYPE, ...headers } })
}
