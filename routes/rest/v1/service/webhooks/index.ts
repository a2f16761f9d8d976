import { subscribeRoute } from '~/integration/webhooks-api'

/** Subscribes the calling `subscr` channel to events: `{id, msg: "subscribed"}`. */
export const POST = subscribeRoute
