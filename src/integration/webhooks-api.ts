/** The routes of webhook subscriptions and of a channel's delivery log; the rules are in webhooks.ts and deliveries.ts. */
import type { Req } from '../http/req'
import { defineRoute } from '../http/route'
import { channels } from './channels'
import { deliveryLog, replayDelivery } from './deliveries'
import { readSubscription, renew, subscribe, unsubscribe } from './webhooks'

/** Any authorized caller reaches the handler, which admits `subscr` channel tokens only (403 for the rest). */
const subscriptionRoute = (handle: (req: Req) => unknown) =>
  defineRoute({ access: 'session', domainKind: 'working', handle })

export const subscribeRoute = subscriptionRoute(async (req) => subscribe(req.ctx, await req.json()))
export const readSubscriptionRoute = subscriptionRoute((req) => readSubscription(req.ctx, req.params.id ?? ''))
export const renewRoute = subscriptionRoute(async (req) => renew(req.ctx, req.params.id ?? '', await req.json()))
export const unsubscribeRoute = subscriptionRoute((req) => unsubscribe(req.ctx, req.params.id ?? ''))

/** GET /rest/v1/service/integration_points/:id/deliveries: the channel's deliveries, newest first. */
export const deliveryLogRoute = defineRoute({
  domainKind: channels.domainKind,
  handle: (req) => deliveryLog(req.ctx, req.uuidParam('id')),
})

/** POST /rest/v1/service/integration_points/:id/deliveries/:job/replay: a failed delivery goes out again. */
export const replayRoute = defineRoute({
  domainKind: channels.domainKind,
  handle: (req) => replayDelivery(req.ctx, req.uuidParam('id'), req.uuidParam('job')),
})
