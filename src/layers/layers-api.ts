/** Routes of /rest/v1/domain/product_layer. */
import * as v from 'valibot'
import { listQuery, NoQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, errors } from '../http/schemas'
import { Instant } from '../values'
import { listLayers, Order, orderLayer } from './product-layer-orders'

const names = v.array(v.string())

/** An order's record: what it asked for, how far it got, and where the listing places it. */
const OrderEntries = {
  operation: v.picklist(['install', 'update', 'delete', 'clear']),
  prefix: v.string(),
  mode: v.picklist(['default']),
  file: v.pipe(v.string(), v.description('the archive of the layer, in the layers directory')),
  site: v.string(),
  dt: v.pipe(Instant, v.description('when the order was recorded, then when it ended')),
  status: v.picklist(['registered', 'installed', 'identical', 'deleted', 'cleared', 'failure']),
  md5: v.pipe(v.string(), v.description("the archive's MD5 (install and update; else empty)")),
  trace: v.pipe(v.string(), v.description('what the order did, or why it failed')),
  kind: v.pipe(
    v.picklist(['current', 'attempt', 'history']),
    v.description('current: the layer now; attempt: an order after it (identical, failed or not yet done)'),
  ),
  order: v.pipe(v.number(), v.integer(), v.description('0 for the current state, 1, 2, … for the attempts after it')),
}

/** What an installed order put in the domain (the worker may have finished it before the answer is read). */
const Installed = v.strictObject({ classes: names, svcscripts: names, extobjs: names, settings: names })

const OrderDoc = v.strictObject({ ...OrderEntries, installed: v.optional(Installed) })

/** As the listing shows an order: operation and prefix only when the mask names them. */
const ListedOrder = v.strictObject({
  ...OrderEntries,
  operation: v.optional(OrderEntries.operation),
  prefix: v.optional(OrderEntries.prefix),
  progress: v.optional(
    v.pipe(
      v.strictObject({ done: v.number(), total: v.number() }),
      v.description('how far an order being carried out has got'),
    ),
  ),
})

export const orderLayerRoute = defineRoute({
  summary: 'Order a product layer operation',
  description:
    'Records the order (status registered) and answers it; a worker carries it out, one order at a time per ' +
    'domain. install and update need the prefix of an archive in the layers directory (the latest by name); ' +
    'delete and clear act on the installed layer (409 when none is).',
  query: NoQuery,
  body: v.optional(Order),
  response: { 200: answer(OrderDoc), ...errors(409) },
  handle: (req) => orderLayer(req.ctx, req.body ?? {}),
})

export const listLayersRoute = defineRoute({
  summary: 'List the product layer of the domain and the orders after it',
  description:
    'The current state (kind current, order 0) and the orders after it (kind attempt, order 1, 2, …), in that ' +
    'order unless the list parameters say otherwise. An order being carried out shows its progress.',
  query: listQuery(),
  response: { 200: answer(v.array(ListedOrder)) },
  duringLongWork: true, // progress is what one asks while an order runs
  handle: (req) => listLayers(req.ctx, req.query),
})
