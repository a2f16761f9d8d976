import { patchSettingRoute, readSettingRoute } from '~/entities/settings-api'

export const GET = readSettingRoute
export const PATCH = patchSettingRoute
