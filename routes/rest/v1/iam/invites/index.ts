import { createInvitation } from '~/credentials/invitations-api'

export const POST = createInvitation
