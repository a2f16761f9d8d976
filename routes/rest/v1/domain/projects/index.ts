import { projects } from '~/projects/projects'
import { create, list, lookup } from '~/http/resource'

export const GET = list(projects)
export const POST = create(projects)
export const LOOKUP = lookup(projects)
