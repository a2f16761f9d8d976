import { users } from '~/directory/users'
import { create, list, lookup } from '~/http/resource'
import { errors } from '~/http/schemas'

export const GET = list(users)
/** A password the domain's policy refuses is 412/1501 naming pwd. */
export const POST = create(users, { answers: errors(412) })
export const LOOKUP = lookup(users)
