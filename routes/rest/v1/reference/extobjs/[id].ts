import { extobjs } from '~/reference/extobjs'
import { patch, read, remove } from '~/http/resource'

export const GET = read(extobjs)
export const PATCH = patch(extobjs)
export const DELETE = remove(extobjs)
