import { svctasks } from '~/scripts/svctasks'
import { patch, read, remove } from '~/http/resource'

export const GET = read(svctasks)
export const PATCH = patch(svctasks)
export const DELETE = remove(svctasks)
