import { domains } from '~/entities/registry'
import { patch, read, remove } from '~/http/resource'

export const GET = read(domains)
export const PATCH = patch(domains)
export const DELETE = remove(domains)
