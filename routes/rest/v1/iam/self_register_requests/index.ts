import { createSelfRegistration } from '~/credentials/self-registration'

export const POST = createSelfRegistration
