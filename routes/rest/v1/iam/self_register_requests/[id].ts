import { confirmSelfRegistration } from '~/credentials/self-registration'

export const PATCH = confirmSelfRegistration
