import { replayRoute } from '~/integration/webhooks-api'

/** Sends a failed delivery again. */
export const POST = replayRoute
