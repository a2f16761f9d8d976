/**
 * What the credential flows share (SPEC "Password change and recovery", "Invitations",
 * "Self-registration"): the success envelope, rate limits per key held in the KV store, the guard
 * for an external authorization script, and the links the mails carry. Their routes and answer
 * schemas are the `*-api.ts` files beside this one.
 */
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import { type Doc, getPath, isPlainObject } from '~storage/doc'
import { DuplicateError } from '~storage/repository'
import {
  findRequest,
  insertRequest,
  type NewRequest,
  type RequestKind,
  type StoredRequest,
  takeRequest,
} from '~storage/requests'
import type { Ctx } from '../context'
import type { Deps } from '../deps'
import { findMasterDomain } from '../directory/domains'
import { type User, users } from '../directory/users'
import { commit } from '../entities/unit'
import { issuePath } from '../entities/validate'
import { patchStep, preparePatch } from '../entities/writes'
import { ApiError, conflict, fieldInvalid, tooManyRequests } from '../errors'
import { enqueueMail, type OutgoingMail } from '../mail/mail'
import { settingValue } from '../settings/settings'

export { DAY_MS, HOUR_MS } from '../clock'

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
  const message =
    issue.received === 'undefined'
      ? `${field} is required`
      : issue.expected === 'never'
        ? `unknown field '${field}'`
        : `${field}: ${issue.message}`
  throw fieldInvalid(field, message)
}

/**
 * One action per key per window: refused with 429 and Retry-After while the window holds an
 * earlier one. The request's own entry is written first and taken back when refused, so two
 * requests racing each other cannot both pass.
 */
export async function limitRate(
  deps: Pick<Deps, 'clock' | 'kv'>,
  action: string,
  keys: string[],
  windowMs: number,
): Promise<void> {
  const now = deps.clock.now()
  const entry = `${now}:${crypto.randomUUID()}`
  const written: string[] = []
  for (const key of keys) {
    const k = `limit:${action}:${key}`
    written.push(k)
    const times = await deps.kv.window(k, now, windowMs, entry)
    if (times.length > 1) {
      for (const w of written) await deps.kv.zrem(w, entry)
      throw tooManyRequests(
        `${action}: one request per ${windowMs / 60_000} minute(s); try again later`,
        Math.max(1, Math.ceil((times[0]! + windowMs - now) / 1000)),
      )
    }
  }
}

/** With an external authorization script (master-domain setting iam_token_svcscript_code), passwords are not ours to manage. */
export async function refuseWithExternalAuth(deps: Deps): Promise<void> {
  const master = await findMasterDomain(deps)
  const code = master ? await settingValue<string>(deps, master.id, 'iam_token_svcscript_code') : ''
  if (code) {
    throw new ApiError(
      403,
      `passwords are managed by the external authorization script '${code}'; this endpoint is not available`,
    )
  }
}

/**
 * Stores a new request and its mail in one transaction; the mail goes out after the commit. A
 * request bound to an account is refused if the account's e-mail or login changed since it was
 * read: that change voided the account's requests, and this one would outlive it.
 */
export async function openRequest(ctx: Ctx, request: NewRequest, mail: OutgoingMail): Promise<void> {
  await commit(ctx, function* (u) {
    if (request.account) {
      const [current] = yield* ctx.deps.repo(users.table).getMany(request.domain, [request.account])
      if (!current || emailOf(current) !== request.doc.email || current.login !== request.doc.login)
        throw conflict('the account changed meanwhile; ask again')
    }
    yield* insertRequest(request, u.w.now)
    yield* enqueueMail(u, mail)
  })
}

/** The request a mailed link names (its id), while it is current; else 404. */
export async function pendingRequest(
  deps: Deps,
  id: string,
  kind: RequestKind,
  what: string,
): Promise<{ pending: StoredRequest; now: number }> {
  await refuseWithExternalAuth(deps)
  const now = deps.clock.now()
  const pending = await findRequest(deps.db, id, kind, now)
  if (!pending) throw new ApiError(404, `${what} not found or expired`)
  return { pending, now }
}

/**
 * The second step's consumption of its request, inside the transaction of the change: a link works
 * once, and the password it sets voids the account's other requests (the users entity's hook).
 */
export function* consume(pending: StoredRequest, now: number, what: string): TxStep<void> {
  if (!(yield* takeRequest(pending.key, pending.kind, now))) throw new ApiError(404, `${what} not found or expired`)
}

/**
 * Sets the password of the account `ctx` acts as (policy of its domain; optional login and name),
 * in one transaction with `before` (consuming a request); journaled as the user's update. The
 * users entity ends the account's sessions, except the session of `ctx`. Answers the updated user.
 */
export async function setPassword(
  ctx: Ctx,
  pwd: string,
  options: { before?: () => TxStep<void>; login?: string; name?: string } = {},
): Promise<User> {
  const changes: Doc = { pwd }
  if (options.login !== undefined) changes.login = options.login
  if (options.name !== undefined) changes.name = options.name
  const prepared = await preparePatch(ctx, users, ctx.actor.id, changes)
  let updated: User | undefined
  try {
    updated = await commit(ctx, function* (u) {
      if (options.before) yield* options.before()
      return yield* patchStep(u, prepared, ctx.actor.id)
    })
  } catch (err) {
    if (err instanceof DuplicateError)
      throw fieldInvalid('login', `login ${err.value ?? ''} is taken in this domain`.replace('  ', ' '))
    throw err
  }
  if (!updated) throw new ApiError(404, 'the account no longer exists')
  return updated
}

/** The envelope of a second step: the account's domain name and login. */
export async function accountEnvelope(deps: Deps, message: string, domainId: string, login: string): Promise<Envelope> {
  const domain = await deps.access.domainInfo(domainId)
  return envelope(message, { domain: domain?.name ?? '', login })
}

/** The link a mail carries to one of the system pages. */
export const pageLink = (deps: Deps, page: string, id: string) => `${deps.config.publicUrl}/pages/${page}?id=${id}`

export const emailOf = (user: Doc): string | undefined => {
  const email = getPath(user, 'opts.email')
  return typeof email === 'string' && email ? email : undefined
}
