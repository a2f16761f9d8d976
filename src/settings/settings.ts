/**
 * Domain settings (/rest/v1/domain/settings): a fixed catalog of keys, each with the shape of its
 * value and a default. A domain stores a setting only once it changes it; reads show the default
 * until then. `key` cannot change.
 */
import * as v from 'valibot'
import { type Doc, isPlainObject } from '~storage/doc'
import { listWithDefaults } from '~storage/keyed'
import type { ListQuery } from '~storage/query'
import type { TableSpec } from '~storage/repository'
import type { Ctx } from '../context'
import type { Deps } from '../deps'
import type { TxStep } from '~storage/db'
import { commit, type Unit } from '../entities/unit'
import { validate } from '../entities/validate'
import { mergeMembers } from '../entities/writes'
import { badRequest, notFound } from '../errors'
import { FieldSet } from '../query/fields'
import { DEFAULT_WORKING_HOURS } from '../scripts/task-schedule'
import { svcscripts } from '../scripts/svcscripts'
import { workingHours } from '../scripts/time-windows'

interface SettingDef {
  value: v.GenericSchema
  default: unknown
}

const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max))

/** Every setting a domain has. Add a key here with its value shape and default. */
export const SETTINGS: Record<string, SettingDef> = {
  alertcall_defaults: {
    value: v.strictObject({
      attemptcount: int(1, 100),
      attempttimeoutsec: int(0, 86400),
      callerid: v.string(),
      callername: v.string(),
      calltimeout: int(1, 3600),
      trunkcount: int(1, 1000),
    }),
    default: { attemptcount: 1, attempttimeoutsec: 10, callerid: '', callername: '', calltimeout: 30, trunkcount: 1 },
  },
  /** Whether POST /iam/self_register_requests is open in this domain. */
  self_register_allowed: { value: v.boolean(), default: false },
  /** What a self-registered account starts with. */
  self_register_template: {
    value: v.strictObject({
      roles: v.array(v.string()),
      groups: v.array(v.pipe(v.string(), v.uuid())),
      opts: v.record(v.string(), v.unknown()),
    }),
    default: { roles: ['user'], groups: [], opts: {} },
  },
  password_policy: { value: v.strictObject({ min_length: int(4, 128) }), default: { min_length: 8 } },
  /** Code of the service script that verifies external tokens at login (master domain). */
  iam_token_svcscript_code: { value: v.string(), default: '' },
  /** When service tasks with `schedule: work` may start (src/scripts/task-schedule.ts reads it). */
  working_hours: { value: workingHours, default: DEFAULT_WORKING_HOURS },
}

/** Keyed by the setting's key (in the `id` column); the journal names a setting by its key. */
export const settingsTable: TableSpec = { table: 'settings', objtype: 'setting', idField: 'key', stamps: false }
export const settingFields = new FieldSet(['key', 'value', 'value.*'])
/** The list shows `key` unless the mask asks for `value` too. */
export const SETTING_LIST_DEFAULT = ['key']

const defaultDoc = (key: string): Doc => ({ key, value: structuredClone(SETTINGS[key]!.default) })

/** The setting of this key, if there is one: own keys only (`constructor`, `__proto__` are no settings). */
export const knownSetting = (key: string | undefined): SettingDef | undefined =>
  key !== undefined && Object.hasOwn(SETTINGS, key) ? SETTINGS[key] : undefined

function settingDef(key: string | undefined): SettingDef {
  const def = knownSetting(key)
  if (!def) throw notFound(`no setting ${JSON.stringify(key ?? '')}`)
  return def
}

export function listSettings(deps: Deps, domain: string, q: ListQuery): Promise<Doc[]> {
  return listWithDefaults(deps.db, settingsTable, domain, Object.keys(SETTINGS).map(defaultDoc), q)
}

export async function getSetting(deps: Deps, domain: string, key: string | undefined): Promise<Doc> {
  settingDef(key)
  return (await deps.repo(settingsTable).get(domain, key!)) ?? defaultDoc(key!)
}

/** The value of a setting in a domain (stored or default). */
export async function settingValue<T>(deps: Deps, domain: string, key: keyof typeof SETTINGS): Promise<T> {
  return (await getSetting(deps, domain, key)).value as T
}

/** The same as a transaction step (an entity's view made in a read or a write's transaction). */
export function* settingValueStep<T>(ctx: Ctx, key: keyof typeof SETTINGS): TxStep<T> {
  const stored = yield* ctx.deps.repo(settingsTable).current(ctx.domain, key)
  return (stored ?? defaultDoc(key)).value as T
}

/** An object value is merged one level deep (null removes a member); any other value is replaced. */
function nextValue(def: SettingDef, current: unknown, given: unknown): unknown {
  const value = isPlainObject(current) && isPlainObject(given) ? mergeMembers(current, given) : given
  return validate(v.object({ value: def.value }), { value }).value
}

/** A PATCH of a setting: the body's members were checked by the route's schema. */
export async function patchSetting(
  ctx: Ctx,
  key: string | undefined,
  body: { key?: string; value?: unknown },
): Promise<Doc> {
  const def = settingDef(key)
  if (body.key !== undefined && body.key !== key) throw badRequest('key cannot be changed', 'key')
  if (body.value === undefined) return getSetting(ctx.deps, ctx.domain, key)
  const given = body.value
  if (key === 'iam_token_svcscript_code') await checkTokenScript(ctx, given)
  return commit(ctx, (u) => writeSetting(u, key!, (current) => nextValue(def, current, given)))
}

/**
 * The token login script is the master domain's: elsewhere the setting is refused (nothing would
 * read it), and a code it names must be one of the master domain's scripts ('' turns it off).
 */
async function checkTokenScript(ctx: Ctx, given: unknown): Promise<void> {
  if (!(await ctx.deps.access.domainInfo(ctx.domain))?.isMaster)
    throw badRequest('iam_token_svcscript_code is a setting of the master domain only', 'key')
  if (typeof given !== 'string' || given === '') return // the value's shape is checked with the others
  const [script] = await ctx.deps.repo(svcscripts.table).findBy(ctx.domain, 'code', given, 1)
  if (!script) throw badRequest(`there is no service script with code ${JSON.stringify(given.slice(0, 128))}`, 'value')
}

/** Stores a setting's next value, made from its current one (the default until the domain stored one). */
export function* writeSetting(u: Unit, key: string, next: (current: unknown) => unknown): TxStep<Doc> {
  const repo = u.ctx.deps.repo(settingsTable)
  const updated = yield* repo.update(u.w, key, (current) => ({ ...current, value: next(current.value) }))
  return updated ?? (yield* repo.insert(u.w, { key, value: next(settingDef(key).default) }))
}
