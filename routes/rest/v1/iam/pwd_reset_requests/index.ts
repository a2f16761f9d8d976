import { createPasswordReset } from '~/credentials/password-reset'

export const POST = createPasswordReset
