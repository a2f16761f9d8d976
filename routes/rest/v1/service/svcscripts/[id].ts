import { svcscripts } from '~/scripts/svcscripts'
import { patch, read, remove } from '~/http/resource'

export const GET = read(svcscripts)
export const PATCH = patch(svcscripts)
export const DELETE = remove(svcscripts)
