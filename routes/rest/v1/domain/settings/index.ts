import { listSettingsRoute } from '~/entities/settings-api'

export const GET = listSettingsRoute
