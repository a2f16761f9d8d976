/** Generated request ids: a random per-process prefix and a counter, unique across a cluster and cheap. */
const ID_PREFIX = crypto.randomUUID().slice(0, 8)
let requestCounter = 0

// the counter in decimal: a number is written in base 36 by a slow general path (1-5 % of a point read's profile)
export const newRequestId = () => `${ID_PREFIX}-${++requestCounter}`
