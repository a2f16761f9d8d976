import { classes } from '~/model/classes'
import { patch, read, remove } from '~/http/resource'

export const GET = read(classes)
export const PATCH = patch(classes)
export const DELETE = remove(classes)
