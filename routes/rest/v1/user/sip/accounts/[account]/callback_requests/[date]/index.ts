import { callbackDayList } from '~/callbacks/callback-orders-api'

export const GET = callbackDayList
