import { listSettingsRoute } from '~/settings/settings-api'

export const GET = listSettingsRoute
