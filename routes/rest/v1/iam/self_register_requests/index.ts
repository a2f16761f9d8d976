import { createSelfRegistration } from '~/credentials/self-registration-api'

export const POST = createSelfRegistration
