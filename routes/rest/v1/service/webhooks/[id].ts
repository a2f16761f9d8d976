import { readSubscriptionRoute, renewRoute, unsubscribeRoute } from '~/integration/webhooks-api'

/** One subscription of the calling channel: read (`[]` once lapsed), renew and replace, unsubscribe. */
export const GET = readSubscriptionRoute
export const PUT = renewRoute
export const DELETE = unsubscribeRoute
