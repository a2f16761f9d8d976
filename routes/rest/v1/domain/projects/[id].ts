import { projects } from '~/projects/projects'
import { patch, read, remove } from '~/http/resource'

export const GET = read(projects)
export const PATCH = patch(projects)
export const DELETE = remove(projects)
