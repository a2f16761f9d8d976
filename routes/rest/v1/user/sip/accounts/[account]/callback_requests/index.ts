import { callbackList } from '~/callbacks/callback-orders-api'

export const GET = callbackList
