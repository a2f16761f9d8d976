import { deliveryLogRoute } from '~/integration/webhooks-api'

/** The channel's webhook deliveries: attempts, status, latency, last error. */
export const GET = deliveryLogRoute
