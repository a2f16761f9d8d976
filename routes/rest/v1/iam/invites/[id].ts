import { acceptInvitation } from '~/credentials/invitations'

export const PATCH = acceptInvitation
