import { rotateSecretRoute } from '~/integration/channels-api'

/** Rotates the channel's webhook signing secret and answers the new one (shown this once). */
export const POST = rotateSecretRoute
