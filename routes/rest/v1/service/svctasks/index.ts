import { svctasks } from '~/scripts/svctasks'
import { create, list, lookup } from '~/http/resource'

export const GET = list(svctasks)
export const POST = create(svctasks)
export const LOOKUP = lookup(svctasks)
