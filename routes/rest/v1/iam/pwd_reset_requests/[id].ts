import { completePasswordReset } from '~/credentials/password-reset-api'

export const PATCH = completePasswordReset
