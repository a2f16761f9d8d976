/** Routes of /rest/v1/domain/product_layer. */
import { defineRoute } from '../http/route'
import { listLayers, orderLayer } from './orders'

export const orderLayerRoute = defineRoute({ handle: async (req) => orderLayer(req.ctx, await req.json()) })
export const listLayersRoute = defineRoute({
  handle: (req) => listLayers(req.ctx, req.query),
  duringLongWork: true, // progress is what one asks while an order runs
})
