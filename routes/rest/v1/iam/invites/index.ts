import { createInvitation } from '~/credentials/invitations'

export const POST = createInvitation
