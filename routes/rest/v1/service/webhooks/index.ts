import { listSubscriptionsRoute, subscribeRoute } from '~/integration/webhooks-api'

/** Subscribes the calling `subscr` channel to events: `{id, msg: "subscribed"}`; lists its subscriptions. */
export const POST = subscribeRoute
export const GET = listSubscriptionsRoute
