import { domains } from '~/entities/registry'
import { create, list, lookup } from '~/http/resource'

export const GET = list(domains)
export const POST = create(domains)
export const LOOKUP = lookup(domains)
