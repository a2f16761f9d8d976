import { borderrules } from '~/master/borderrules'
import { create, list, lookup } from '~/http/resource'

export const GET = list(borderrules)
export const POST = create(borderrules)
export const LOOKUP = lookup(borderrules)
