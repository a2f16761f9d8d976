import { callbackDelete, callbackPatch, callbackRead } from '~/callbacks/callback-orders-api'

export const GET = callbackRead
export const PATCH = callbackPatch
export const DELETE = callbackDelete
