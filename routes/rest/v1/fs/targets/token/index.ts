import { listFilesRoute, uploadFilesRoute } from '~/integration/files-api'

export const GET = listFilesRoute
export const POST = uploadFilesRoute
