import { listFilesRoute, uploadFilesRoute } from '~/integration/files'

export const GET = listFilesRoute
export const POST = uploadFilesRoute
