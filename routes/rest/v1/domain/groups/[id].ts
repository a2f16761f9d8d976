import { groups } from '~/directory/groups'
import { patch, read, remove } from '~/http/resource'

export const GET = read(groups)
export const PATCH = patch(groups)
export const DELETE = remove(groups)
