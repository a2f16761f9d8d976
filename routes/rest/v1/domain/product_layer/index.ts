import { listLayers, orderLayer } from '~/layers/service'

export const GET = listLayers
export const POST = orderLayer
