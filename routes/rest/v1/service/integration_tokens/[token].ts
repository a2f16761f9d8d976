import { checkToken } from '~/integration/tokens-api'

/** Whether a local token belongs to a channel of the current domain (404 1404 "Token not found" otherwise). */
export const GET = checkToken
