import { readHandlerRoute, stopHandlerRoute } from '~/scripts/runtimes-api'

export const GET = readHandlerRoute
export const DELETE = stopHandlerRoute
