import { patchNodeRoute, readNodeRoute, terminateNodeRoute } from '~/master/nodes-api'

export const GET = readNodeRoute
export const PATCH = patchNodeRoute
export const DELETE = terminateNodeRoute
