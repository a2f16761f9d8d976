/**
 * CHECK_ANSWERS=on (the tests turn it on): every answer is checked against the schema its route
 * declares for its status, so the contract the API description and the typed client are made of
 * is the one the tests see kept. An answer that does not match becomes a 500 naming the route, the
 * status and the first difference. A running service does not check its own answers.
 */
import * as v from 'valibot'
import { JsonText } from '~storage/json-text'
import { issuePath } from '../../entities/validate'
import type { Req } from '../req'
import type { RouteTable } from '../router'
import { ANY_MEDIA, type AnswerSchema, answer as answerOf, deepPartial, ErrorBody, type Responses } from '../schemas'

/** What an answer no route gave (no route at the URL, a method it does not serve) is. */
const AN_ERROR = answerOf(ErrorBody)

/** The members of `doc` with dotted keys as nested ones (what `flat=true` answered, read back). */
function unflatten(doc: unknown): unknown {
  if (Array.isArray(doc)) return doc.map(unflatten)
  if (doc === null || typeof doc !== 'object') return doc
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(doc)) {
    const parts = key.split('.')
    let at = out
    for (const part of parts.slice(0, -1)) {
      at[part] ??= {}
      at = at[part] as Record<string, unknown>
    }
    at[parts[parts.length - 1]!] = value
  }
  return out
}

/** Why the answer does not match what its route declares, or null when it does. */
export function answerViolation(routes: RouteTable, req: Req, status: number, value: unknown): string | null {
  const where = `${req.method} ${req.route || req.rawPath}`
  const spec = req.route ? routes.match(req.rawPath)?.entry.module[req.method as 'GET'] : undefined
  const declared: Responses | undefined = spec?.hook.response
  const answer: AnswerSchema | undefined = declared ? declared[status] : status >= 400 ? AN_ERROR : undefined
  if (!answer) return `${where} answered ${status}, which it does not declare`
  if (value instanceof Response) {
    const type = value.headers.get('content-type') ?? ''
    if (answer.media && answer.media !== ANY_MEDIA && !type.startsWith(answer.media))
      return `${where} answered ${status} as ${type || 'no type'}, declared ${answer.media}`
    return null // a body of its own (a file, a page): its type is what is declared
  }
  if (answer.media) return `${where} answered ${status} with JSON, declared ${answer.media}`
  let body = value instanceof JsonText ? JSON.parse(value.text) : value
  const flat = (req.query as Record<string, unknown> | undefined)?.flat
  if (flat === 'true' || flat === '1') body = unflatten(body)
  // a mask may leave any member out
  const schema = (req.query as Record<string, unknown> | undefined)?.mask ? deepPartial(answer.schema) : answer.schema
  const result = v.safeParse(schema, body)
  if (result.success) return null
  const issue = result.issues[0]
  return `${where} answered ${status} not as declared: ${issuePath(issue) || '(the body)'}: ${issue.message}`
}
