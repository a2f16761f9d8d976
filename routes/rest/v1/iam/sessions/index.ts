import { createSession } from '~/identity/session-api'

export const POST = createSession
