import { listHandlersRoute, startHandlerRoute } from '~/scripts/runtimes-api'

export const GET = listHandlersRoute
export const POST = startHandlerRoute
