import { forgotPassword } from '~/pages/pages'

export const GET = forgotPassword
