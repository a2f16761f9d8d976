import { projectApi } from '~/integration/project-api'

export const GET = projectApi
export const POST = projectApi
export const PUT = projectApi
export const PATCH = projectApi
export const DELETE = projectApi
