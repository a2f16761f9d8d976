import { resetPassword } from '~/pages/pages'

export const GET = resetPassword
