import { patchSettingRoute, readSettingRoute } from '~/settings/settings-api'

export const GET = readSettingRoute
export const PATCH = patchSettingRoute
