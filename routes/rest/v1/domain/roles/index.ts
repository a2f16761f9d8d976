import { roles } from '~/directory/roles'
import { create, list, lookup } from '~/http/resource'

export const GET = list(roles)
export const POST = create(roles)
export const LOOKUP = lookup(roles)
