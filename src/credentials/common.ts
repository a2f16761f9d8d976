/**
 * What the credential flows share (SPEC "Password change and recovery", "Invitations",
 * "Self-registration"): the success envelope, rate limits per key held in the KV store, the guard
 * for an external authorization script, and the links the mails carry.
 */
import * as v from 'valibot'
import { isPlainObject, type Doc } from '~storage/doc'
import type { Deps } from '../deps'
import { settingValue } from '../entities/settings'
import { issuePath } from '../entities/validate'
import { ApiError, fieldInvalid, tooManyRequests } from '../http/errors'
import type { Req } from '../http/req'

export const HOUR_MS = 3600_000
export const DAY_MS = 24 * HOUR_MS

export interface Envelope {
  error_code: 0
  result: true
  result_msg: string
  user?: { domain: string; login: string }
}

export const envelope = (result_msg: string, user?: { domain: string; login: string }): Envelope =>
  user ? { error_code: 0, result: true, result_msg, user } : { error_code: 0, result: true, result_msg }

/** Field validation in the credential areas: 412 with error_code 1501 naming the field. */
export function validateFields<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, isPlainObject(body) ? body : {})
  if (result.success) return result.output
  const issue = result.issues[0]
  const field = issuePath(issue) || 'body'
  const message = issue.received === 'undefined' ? `${field} is required` : issue.expected === 'never' ? `unknown field '${field}'` : `${field}: ${issue.message}`
  throw fieldInvalid(field, message)
}

/**
 * One action per key per window: refused with 429 and Retry-After while the window holds an
 * earlier one. Every key is checked before any is recorded.
 */
export async function limitRate(req: Req, action: string, keys: string[], windowMs: number): Promise<void> {
  const now = req.deps.clock.now()
  for (const key of keys) {
    const [last] = await req.deps.kv.window(`limit:${action}:${key}`, now, windowMs, false)
    if (last !== undefined) throw tooManyRequests(`${action}: one request per ${windowMs / 60_000} minute(s); try again later`, Math.max(1, Math.ceil((last + windowMs - now) / 1000)))
  }
  for (const key of keys) await req.deps.kv.window(`limit:${action}:${key}`, now, windowMs, true)
}

/** With an external authorization script (master-domain setting iam_token_svcscript_code), passwords are not ours to manage. */
export async function refuseWithExternalAuth(deps: Deps, masterId: string): Promise<void> {
  const code = await settingValue<string>(deps, masterId, 'iam_token_svcscript_code')
  if (code) throw new ApiError(403, `passwords are managed by the external authorization script '${code}'; this endpoint is not available`)
}

/** The link a mail carries to one of the system pages. */
export const pageLink = (deps: Deps, page: string, id: string) => `${deps.config.publicUrl}/pages/${page}?id=${id}`

export const emailOf = (user: Doc): string | undefined => ((user.opts as Doc | undefined)?.email as string | undefined) || undefined
