/** Routes of /rest/v1/domain/settings. */
import * as v from 'valibot'
import { DEFAULT_LIMITS } from '../entities/entity'
import { FieldSet } from '../query/fields'
import { parseFlat, parseListParams, parseMask } from '../query/list-query'
import { present } from '../query/present'
import { ITEM_PARAMS, listQuery, NoQuery, queryOf } from '../http/query-schemas'
import { newVersion } from '../http/if-match'
import { defineRoute } from '../http/route'
import { answer, errors } from '../http/schemas'
import { objectBody } from '../values'
import {
  getSetting,
  knownSetting,
  listSettings,
  patchSetting,
  SETTING_LIST_DEFAULT,
  SETTINGS,
  settingFields,
} from './settings'

const listShape = { fields: settingFields, output: new FieldSet(['key', 'value']), limits: DEFAULT_LIMITS }

const SettingKey = v.picklist(Object.keys(SETTINGS))
/** The value, when shown, has the shape of its key's setting. */
const valueOfItsKey = <T extends { key: string; value?: unknown }>() =>
  v.check<T, string>(
    (s) => s.value === undefined || v.is(knownSetting(s.key)!.value, s.value),
    "value: not of the shape of the key's setting",
  )

/**
 * A setting: its key and value. The value's shape is the key's (one schema per key), checked on the
 * whole answer; a mask, which may leave any part of the value out, is checked on the members only.
 */
const Setting = v.pipe(
  v.strictObject({
    key: SettingKey,
    value: v.pipe(v.unknown(), v.description("shaped as the key's entry of the catalog says")),
  }),
  valueOfItsKey(),
)
/** The list shows `value` only when the mask asks for it. */
const ListedSetting = v.pipe(v.strictObject({ key: SettingKey, value: v.optional(v.unknown()) }), valueOfItsKey())

const KeyParams = v.object({ key: v.string() })
const NO_SUCH_KEY = errors(404)

export const listSettingsRoute = defineRoute({
  summary: 'List the settings of the domain',
  description:
    'Every key of the catalog, with its default until the domain changes it. The list shows `key` only ' +
    'unless the mask names `value`.',
  query: listQuery(),
  response: { 200: answer(v.array(ListedSetting)) },
  async handle(req) {
    const { query, mask, flat } = parseListParams(req.query, listShape)
    const docs = await listSettings(req.deps, req.ctx.domain, query)
    return docs.map((d) => present(d, mask ?? SETTING_LIST_DEFAULT, flat))
  },
})

export const readSettingRoute = defineRoute({
  summary: 'Read a setting',
  description: 'The value the domain stored, else the default. A key not in the catalog is 404.',
  params: KeyParams,
  query: queryOf(ITEM_PARAMS),
  response: { 200: answer(Setting), ...NO_SUCH_KEY },
  async handle(req) {
    const mask = req.query.mask === undefined ? null : parseMask(req.query.mask, settingFields)
    return present(await getSetting(req.deps, req.ctx.domain, req.params.key), mask, parseFlat(req.query.flat))
  },
})

export const patchSettingRoute = defineRoute({
  summary: 'Change a setting',
  description:
    "The value must have the key's shape; an object value is merged one level deep (a null member removes " +
    'it). Answers the whole setting, with the ETag a GET of it answers. `key`, when given, must be the addressed ' +
    'one; a key not in the catalog is 404.',
  params: KeyParams,
  query: NoQuery,
  body: objectBody({ key: v.optional(v.string()), value: v.optional(v.unknown()) }),
  response: { 200: answer(Setting), ...NO_SUCH_KEY },
  handle: async (req) => newVersion(req, await patchSetting(req.ctx, req.params.key, req.body)),
})
