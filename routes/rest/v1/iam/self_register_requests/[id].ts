import { confirmSelfRegistration } from '~/credentials/self-registration-api'

export const PATCH = confirmSelfRegistration
