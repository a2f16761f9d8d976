import { acceptInvitation } from '~/pages/pages'

export const GET = acceptInvitation
