import { borderrules } from '~/master/borderrules'
import { patch, read, remove } from '~/http/resource'

export const GET = read(borderrules)
export const PATCH = patch(borderrules)
export const DELETE = remove(borderrules)
