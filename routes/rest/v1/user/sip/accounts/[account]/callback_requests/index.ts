import { callbackList } from '~/callbacks/orders-api'

export const GET = callbackList
