import { extobjs } from '~/reference/extobjs'
import { create, list, lookup } from '~/http/resource'

export const GET = list(extobjs)
export const POST = create(extobjs)
export const LOOKUP = lookup(extobjs)
