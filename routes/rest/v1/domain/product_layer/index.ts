import { listLayersRoute, orderLayerRoute } from '~/layers/layers-api'

export const GET = listLayersRoute
export const POST = orderLayerRoute
