// The spec's singular path for one node (the original's documentation uses the plural).
import { readNodeRoute } from '~/master/nodes-api'

export const GET = readNodeRoute
