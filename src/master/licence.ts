/**
 * The licence (/rest/v1/master/license). A licence is a compact JWS signed by the licensor (EdDSA
 * or ES256) and verified with LICENSE_PUBLIC_KEY (licence-key.ts). Its claims: `sub` = the
 * installation id it is bound to, `iss`, `iat`, `exp` (optional) and `license`, the licence object
 * of the spec. The token and its verified claims are stored (storage/installation.ts), so the
 * licence in force is computed without verifying again, synchronously, inside any transaction.
 * Without a licence in force (none posted, expired, another installation's, posted under another
 * key) the evaluation licence applies.
 */
import { errors, jwtVerify } from 'jose'
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import { type Installation, readInstallation, storeLicence } from '~storage/installation'
import { isoTime } from '../clock'
import type { Ctx } from '../context'
import type { Deps } from '../deps'
import type { Unit } from '../entities/unit'
import { issuePath } from '../entities/validate'
import { ApiError, badRequest } from '../errors'
import { verifyingKey } from './licence-key'

const count = v.pipe(v.number(), v.integer(), v.minValue(0))

/** The licence object of the spec; members the licensor may add later are ignored. */
export const LicenceSchema = v.object({
  products: v.string(),
  topleveldnpolicy: v.pipe(v.number(), v.integer()),
  dql: v.object({
    domains: count,
    sol_pbx: count,
    devices: count,
    siptrunks: count,
    ivrscripts: count,
    svcscripts: count,
    webservice_public: count,
    webservice_subscr: count,
  }),
  sqf: v.object({ rec: v.boolean(), cdr: v.boolean(), sel: v.boolean() }),
})

export type Licence = v.InferOutput<typeof LicenceSchema>
export type LicenceLimit = keyof Licence['dql']
export const LICENCE_LIMITS = Object.keys(LicenceSchema.entries.dql.entries) as LicenceLimit[]
/** The claim of the token that holds the licence object. */
export const LICENCE_CLAIM = 'license'

/** What applies until a licence is posted, and again once it has expired: enough to try the service. */
export const EVALUATION: Licence = {
  products: 'platform',
  topleveldnpolicy: 0,
  dql: {
    domains: 5,
    sol_pbx: 5,
    devices: 10,
    siptrunks: 2,
    ivrscripts: 5,
    svcscripts: 10,
    webservice_public: 2,
    webservice_subscr: 2,
  },
  sqf: { rec: false, cdr: true, sel: false },
}

/** The licence as the API shows it: the spec's object, then where it comes from. */
export type LicenceView = Licence & {
  installation: string
  evaluation: boolean
  issuer?: string
  issued?: string
  expires?: string
}

/** The latest time a date holds (ms): a claim past it has no date, and toISOString throws on it. */
const LAST_DATE_MS = 8.64e15
const secondsToIso = (s: unknown) =>
  typeof s === 'number' && Math.abs(s * 1000) <= LAST_DATE_MS ? isoTime(s * 1000) : undefined

function evaluationView(installation: string): LicenceView {
  return { ...structuredClone(EVALUATION), installation, evaluation: true }
}

/** A stored licence as the API shows it; `licence` is its licence object (as issued, or as checked). */
function storedView(payload: Doc, licence: Licence): LicenceView {
  const view: LicenceView = {
    ...licence,
    installation: String(payload.sub),
    evaluation: false,
    issuer: String(payload.iss),
    issued: secondsToIso(payload.iat),
  }
  const expires = secondsToIso(payload.exp)
  if (expires) view.expires = expires
  return view
}

/** The stored licence's object when it is in force at `now` under the key `keyId`; undefined otherwise. */
function inForce(inst: Installation, keyId: string, now: number): Licence | undefined {
  const stored = inst.licence
  if (!stored || stored.keyId !== keyId || stored.payload.sub !== inst.id) return undefined
  const exp = stored.payload.exp
  if (typeof exp === 'number' && now >= exp * 1000) return undefined
  const parsed = v.safeParse(LicenceSchema, stored.payload[LICENCE_CLAIM])
  return parsed.success ? parsed.output : undefined
}

/** The licence whose limits apply now (the evaluation licence when none is in force). */
export function activeLicence(deps: Deps, inst: Installation, now: number): LicenceView {
  const licence = inForce(inst, deps.config.licenseKey.id, now)
  return licence ? storedView(inst.licence!.payload, licence) : evaluationView(inst.id)
}

/** The licence posted last, as issued; the evaluation licence when none was posted. */
export function issuedLicence(inst: Installation): LicenceView {
  const stored = inst.licence
  if (!stored) return evaluationView(inst.id)
  // as issued: members the schema does not know are shown too
  return storedView(stored.payload, stored.payload[LICENCE_CLAIM] as Licence)
}

/** The id licences of this installation are bound to. */
export async function installationId(deps: Deps): Promise<string> {
  return (await deps.db.read(readInstallation)).id
}

/** GET: `file` true answers the licence as issued, false the one in force. */
export async function getLicence(ctx: Ctx, file: boolean): Promise<LicenceView> {
  const inst = await ctx.deps.db.read(readInstallation)
  return file ? issuedLicence(inst) : activeLicence(ctx.deps, inst, ctx.deps.clock.now())
}

// ---- posting a licence ----

/** A 400 about the token: `reason` says which check refused it. */
const refused = (reason: string, message: string) => badRequest(`license: ${message}`, 'license', { reason })

/** The claims of a token that verifies with the licence key and is bound to this installation. */
async function verifyToken(deps: Deps, token: string, installation: string): Promise<Doc> {
  const key = deps.config.licenseKey
  let payload: Doc
  try {
    ;({ payload } = await jwtVerify(token, await verifyingKey(key), {
      algorithms: [key.alg],
      requiredClaims: ['sub', 'iss', 'iat'],
      currentDate: new Date(deps.clock.now()),
    }))
  } catch (err) {
    throw explainRefusal(err, key.alg)
  }
  if (typeof payload.iss !== 'string' || payload.iss === '') throw refused('claims', 'the iss claim must be a string')
  // a time no date can hold was stored, then every read of the licence failed (toISOString throws)
  for (const claim of ['iat', 'nbf', 'exp'])
    if (payload[claim] !== undefined && secondsToIso(payload[claim]) === undefined)
      throw refused('claims', `the ${claim} claim is not a time a date can hold (seconds since 1970, within ±8.64e12)`)
  if (payload.sub !== installation)
    throw refused(
      'installation',
      `issued for installation ${JSON.stringify(payload.sub)}, not for this installation (${installation})`,
    )
  const licence = v.safeParse(LicenceSchema, payload[LICENCE_CLAIM])
  if (!licence.success) {
    const issue = licence.issues[0]
    const where = issuePath(issue)
    throw refused(
      'content',
      `the ${LICENCE_CLAIM} claim is not a licence object (${where || LICENCE_CLAIM}: ${issue.message})`,
    )
  }
  return payload
}

/** What jose refused, as a sentence naming the problem. */
function explainRefusal(err: unknown, alg: string): unknown {
  if (err instanceof errors.JWTExpired)
    return refused('expired', `expired at ${secondsToIso(err.payload.exp) ?? 'an earlier time'}`)
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return refused('signature', 'the signature does not verify with the licence key (LICENSE_PUBLIC_KEY)')
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported)
    return refused('algorithm', `signed with an algorithm the licence key does not verify (it verifies ${alg})`)
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return refused('not-yet-valid', `not valid before ${secondsToIso(err.payload.nbf)}`)
    if (err.reason === 'missing') return refused('claims', `the ${err.claim} claim is missing`)
    return refused('claims', `the ${err.claim} claim is invalid (${err.message})`)
  }
  if (err instanceof errors.JOSEError)
    return refused('malformed', 'not a licence token (a compact JWS: three base64url parts joined by dots)')
  return err
}

/** POST: verifies the token and makes it the installation's licence; answers the licence in force. */
export async function installLicence(ctx: Ctx, given: string): Promise<LicenceView> {
  const { deps } = ctx
  const token = given.trim()
  const { id } = await deps.db.read(readInstallation)
  const payload = await verifyToken(deps, token, id)
  const installed = isoTime(deps.clock.now())
  const keyId = deps.config.licenseKey.id
  const inst = await deps.db.write(function* () {
    yield* storeLicence({ token, payload, keyId, installed })
    return yield* readInstallation()
  })
  const active = activeLicence(deps, inst, deps.clock.now())
  deps.log.info('licence installed', { by: ctx.actor.name, issuer: active.issuer, expires: active.expires })
  return active
}

// ---- limits ----

/** 403 naming the limit and its value. */
export const limitReached = (limit: LicenceLimit, value: number) =>
  new ApiError(403, `licence limit reached: ${limit} = ${value}`, { limit, value })

/** The licence in force, as a step of a write transaction (`now` is the unit's time). */
export function* activeLicenceStep(deps: Deps, now: number): TxStep<LicenceView> {
  return activeLicence(deps, yield* readInstallation(), now)
}

/**
 * Inside a create's transaction, after its row is written: a 403 (rolling the create back) when the
 * installation now holds more than the licence in force allows. `count` includes the new row; the
 * transaction makes concurrent creates count one another.
 */
export function* enforceLimit(u: Unit, limit: LicenceLimit, count: number): TxStep<void> {
  const value = (yield* activeLicenceStep(u.ctx.deps, Date.parse(u.w.now))).dql[limit]
  if (count > value) throw limitReached(limit, value)
}
