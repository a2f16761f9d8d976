import { svcscripts } from '~/scripts/svcscripts'
import { create, list, lookup } from '~/http/resource'

export const GET = list(svcscripts)
export const POST = create(svcscripts)
export const LOOKUP = lookup(svcscripts)
