import { callbackDayList } from '~/callbacks/orders-api'

export const GET = callbackDayList
