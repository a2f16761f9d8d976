/**
 * Routes of /rest/v1/user/sip/accounts/<account>/callback_requests[/<date>[/<id>]]: user endpoints
 * of working domains. Any signed-in user may call them (`access: 'session'`, as /user/info): what
 * they reach is limited to the caller's own SIP accounts by orders.ts, not by a role.
 */
import { badRequest } from '../errors'
import { ifMatchDoc } from '../http/if-match'
import type { Req } from '../http/req'
import { defineRoute } from '../http/route'
import { DATE } from '../model/partitions'
import { deleteOrder, listOrders, patchOrder, readOrder } from './orders'

/** `/<YYYY-MM-DD>`: a day of the calendar. */
function dateParam(req: Req): string {
  const date = req.params.date ?? ''
  const at = Date.parse(`${date}T00:00:00Z`)
  if (!DATE.test(date) || Number.isNaN(at) || !new Date(at).toISOString().startsWith(date)) {
    throw badRequest(`date in the path must be a day YYYY-MM-DD, got ${JSON.stringify(date)}`, 'date')
  }
  return date
}

const order = (req: Req) => ({ date: dateParam(req), id: req.uuidParam('id') })

const userRoute = (handle: (req: Req) => unknown) => defineRoute({ access: 'session', domainKind: 'working', handle })

/** GET on the collection (needs `interval`) or on one day. */
export const callbackList = userRoute((req) =>
  listOrders(req.ctx, req.uuidParam('account'), req.params.date === undefined ? null : dateParam(req), req.query),
)
export const callbackRead = userRoute((req) => readOrder(req.ctx, req.uuidParam('account'), order(req), req.query))
/** If-Match, as for any record: checked on the stored order inside the write's transaction. */
const ifMatch = (req: Req) => ifMatchDoc(req, `callback order ${req.params.id}`)
export const callbackPatch = userRoute(async (req) =>
  patchOrder(req.ctx, req.uuidParam('account'), order(req), await req.json(), ifMatch(req)),
)
export const callbackDelete = userRoute((req) =>
  deleteOrder(req.ctx, req.uuidParam('account'), order(req), ifMatch(req)),
)
