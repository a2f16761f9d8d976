import { roles } from '~/directory/roles'
import { patch, read, remove } from '~/http/resource'

export const GET = read(roles)
export const PATCH = patch(roles)
export const DELETE = remove(roles)
