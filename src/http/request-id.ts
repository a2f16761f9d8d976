/** Generated request ids: a random per-process prefix and a counter, unique across a cluster and cheap. */
const ID_PREFIX = crypto.randomUUID().slice(0, 8)
let requestCounter = 0

export const newRequestId = () => `${ID_PREFIX}-${(++requestCounter).toString(36)}`
