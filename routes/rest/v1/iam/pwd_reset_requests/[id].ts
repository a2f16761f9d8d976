import { completePasswordReset } from '~/credentials/password-reset'

export const PATCH = completePasswordReset
