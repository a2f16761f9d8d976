import { createPasswordReset } from '~/credentials/password-reset-api'

export const POST = createPasswordReset
