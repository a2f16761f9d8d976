import { listRoles } from '~/identity/user-api'

export const GET = listRoles
