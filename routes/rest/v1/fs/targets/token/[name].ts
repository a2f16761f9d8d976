import { deleteFileRoute, putFileRoute, readFileRoute } from '~/integration/files-api'

export const GET = readFileRoute
export const HEAD = readFileRoute
export const PUT = putFileRoute
export const DELETE = deleteFileRoute
