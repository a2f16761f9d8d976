import { users } from '~/directory/users'
import { patch, read, remove } from '~/http/resource'

export const GET = read(users)
export const PATCH = patch(users)
export const DELETE = remove(users)
