/** Schemas of the callback order routes: their paths, the one change they take, and the orders they answer. */
import * as v from 'valibot'
import { answer, UuidParam } from '../http/schemas'
import { Instant, JsonObject, Uuid } from '../values'
import { CALLBACK_STATUSES } from '../model/builtin'
import { DATE } from '../model/partitions'

/** A real day of the calendar, YYYY-MM-DD. */
function isDay(date: string): boolean {
  const at = Date.parse(`${date}T00:00:00Z`)
  return DATE.test(date) && !Number.isNaN(at) && new Date(at).toISOString().startsWith(date)
}

const DayParam = v.pipe(
  v.string(),
  v.check(isDay, (issue) => `in the path must be a day YYYY-MM-DD, got ${JSON.stringify(issue.input)}`),
)

export const AccountPath = v.object({ account: UuidParam })
export const DayPath = v.object({ account: UuidParam, date: DayParam })
export const OrderPath = v.object({ account: UuidParam, date: DayParam, id: UuidParam })

export const Interval = v.optional(
  v.pipe(v.string(), v.description('JSON ["from","to"], dates or instants, both ends included; or a day in the path')),
)

const Status = v.picklist(CALLBACK_STATUSES, `status must be one of ${CALLBACK_STATUSES.join(', ')}`)

const CHANGEABLE = ['id', 'status']

/**
 * The only change an order takes: its status (the id may be repeated). Another member is named
 * first, before a missing status: it is what the caller got wrong.
 */
export const StatusBody = v.pipe(
  JsonObject,
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    const input = dataset.value
    const other = Object.keys(input).find((key) => !CHANGEABLE.includes(key))
    if (other === undefined) return
    addIssue({
      message: 'only the status of a callback order can change',
      path: [{ type: 'object', origin: 'value', input, key: other, value: input[other] }],
    })
  }),
  v.strictObject({ id: v.optional(v.string()), status: Status }),
)

/** An order: a record of the built-in class telephony/CallbackRequests, whose shape is fixed. */
const Order = v.strictObject({
  id: Uuid,
  abonentPhoneNumber: v.pipe(v.string(), v.description('who asked to be called back')),
  boxPhoneNumber: v.pipe(v.string(), v.description('the phone number of the SIP account')),
  dateTime: Instant,
  status: Status,
})

export const OrderAnswer = answer(Order)
/** The list presents whole orders, unless the class's opts.max_mask narrows it (an admin may set it). */
export const OrdersAnswer = answer(v.array(v.partial(Order)))
