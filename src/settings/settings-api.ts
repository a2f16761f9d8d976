/** Routes of /rest/v1/domain/settings. */
import { DEFAULT_LIMITS } from '../entities/entity'
import { FieldSet } from '../http/fields'
import { parseFlat, parseListParams, parseMask } from '../http/list-query'
import { present } from '../http/present'
import { defineRoute } from '../http/route'
import { getSetting, listSettings, patchSetting, SETTING_LIST_DEFAULT, settingFields } from './settings'

const listShape = { fields: settingFields, output: new FieldSet(['key', 'value']), limits: DEFAULT_LIMITS }

export const listSettingsRoute = defineRoute({
  async handle(req) {
    const { query, mask, flat } = parseListParams(req.query, listShape)
    const docs = await listSettings(req.deps, req.ctx.domain, query)
    return docs.map((d) => present(d, mask ?? SETTING_LIST_DEFAULT, flat))
  },
})

export const readSettingRoute = defineRoute({
  async handle(req) {
    const mask = req.query.mask === undefined ? null : parseMask(req.query.mask, settingFields)
    return present(await getSetting(req.deps, req.ctx.domain, req.params.key), mask, parseFlat(req.query.flat))
  },
})

export const patchSettingRoute = defineRoute({
  async handle(req) {
    return patchSetting(req.ctx, req.params.key, await req.json())
  },
})
