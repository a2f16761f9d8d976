import { sipusers } from '~/directory/sipusers'
import { patch, read, remove } from '~/http/resource'

export const GET = read(sipusers)
export const PATCH = patch(sipusers)
export const DELETE = remove(sipusers)
