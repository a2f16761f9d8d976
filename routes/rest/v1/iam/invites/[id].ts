import { acceptInvitation } from '~/credentials/invitations-api'

export const PATCH = acceptInvitation
