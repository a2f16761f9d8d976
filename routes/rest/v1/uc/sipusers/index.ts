import { sipusers } from '~/directory/sipusers'
import { create, list, lookup } from '~/http/resource'

export const GET = list(sipusers)
export const POST = create(sipusers)
export const LOOKUP = lookup(sipusers)
