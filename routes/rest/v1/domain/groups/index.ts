import { groups } from '~/directory/groups'
import { create, list, lookup } from '~/http/resource'

export const GET = list(groups)
export const POST = create(groups)
export const LOOKUP = lookup(groups)
