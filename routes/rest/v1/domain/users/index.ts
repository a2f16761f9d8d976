import { users } from '~/directory/users'
import { create, list, lookup } from '~/http/resource'

export const GET = list(users)
export const POST = create(users)
export const LOOKUP = lookup(users)
