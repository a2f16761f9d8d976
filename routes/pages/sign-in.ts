import { signIn } from '~/pages/pages'

export const GET = signIn
