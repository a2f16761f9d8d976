/**
 * Routes of /rest/v1/user/sip/accounts/<account>/callback_requests[/<date>[/<id>]]: user endpoints
 * of working domains. Any signed-in user may call them (`access: 'session'`, as /user/info): what
 * they reach is limited to the caller's own SIP accounts by orders.ts, not by a role.
 */
import * as v from 'valibot'
import { ifMatchDoc, newVersion } from '../http/if-match'
import type { Req } from '../http/req'
import { ITEM_PARAMS, listQuery, NoQuery, queryOf } from '../http/query-schemas'
import { defineRoute, type RouteDefinition } from '../http/route'
import { answer, errors, NoContent, type Responses, UuidParam } from '../http/schemas'
import { deleteOrder, listOrders, patchOrder, readOrder } from './callback-orders'
import { Instant, JsonObject, Uuid } from '../values'
import { CALLBACK_STATUSES } from '../model/builtin'
import { DATE } from '../model/partitions'

// ---- the schemas: the paths, the one change the routes take, and the orders they answer ----

/** A real day of the calendar, YYYY-MM-DD. */
function isDay(date: string): boolean {
  const at = Date.parse(`${date}T00:00:00Z`)
  return DATE.test(date) && !Number.isNaN(at) && new Date(at).toISOString().startsWith(date)
}

const DayParam = v.pipe(
  v.string(),
  v.check(isDay, (issue) => `in the path must be a day YYYY-MM-DD, got ${JSON.stringify(issue.input)}`),
)

const AccountPath = v.object({ account: UuidParam })
const DayPath = v.object({ account: UuidParam, date: DayParam })
const OrderPath = v.object({ account: UuidParam, date: DayParam, id: UuidParam })

const Interval = v.optional(
  v.pipe(v.string(), v.description('JSON ["from","to"], dates or instants, both ends included; or a day in the path')),
)

const Status = v.picklist(CALLBACK_STATUSES, `status must be one of ${CALLBACK_STATUSES.join(', ')}`)

const CHANGEABLE = ['id', 'status']

/**
 * The only change an order takes: its status (the id may be repeated). Another member is named
 * first, before a missing status: it is what the caller got wrong.
 */
const StatusBody = v.pipe(
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

const OrderAnswer = answer(Order)
/** The list presents whole orders, unless the class's opts.max_mask narrows it (an admin may set it). */
const OrdersAnswer = answer(v.array(v.partial(Order)))

/** What every route here is: a user's own, in a working domain. */
function userRoute<
  const P extends v.GenericSchema,
  const Q extends v.GenericSchema,
  const B extends v.GenericSchema | undefined = undefined,
  const R extends Responses = Responses,
>(def: RouteDefinition<P, Q, B, R>) {
  return defineRoute({ ...def, access: 'session', domainKind: 'working' })
}

const NOT_YOURS =
  'An account of another user and one that does not exist are the same 404: a caller learns nothing of accounts ' +
  'that are not theirs.'

/** GET on the collection: needs `interval`. */
export const callbackList = userRoute({
  summary: 'List the callback orders of a SIP account',
  description: `Within \`interval\`, newest first unless ordered otherwise. ${NOT_YOURS}`,
  params: AccountPath,
  query: listQuery({ interval: Interval }),
  response: { 200: OrdersAnswer, ...errors(404) },
  handle: (req) => listOrders(req.ctx, req.params.account, null, req.query),
})

export const callbackDayList = userRoute({
  summary: 'List the callback orders of a SIP account on a day',
  description: `Newest first unless ordered otherwise. ${NOT_YOURS}`,
  params: DayPath,
  query: listQuery({ interval: Interval }),
  response: { 200: OrdersAnswer, ...errors(404) },
  handle: (req) => listOrders(req.ctx, req.params.account, req.params.date, req.query),
})

export const callbackRead = userRoute({
  summary: 'Read a callback order',
  description: `With a strong ETag. ${NOT_YOURS}`,
  params: OrderPath,
  query: queryOf(ITEM_PARAMS),
  response: { 200: OrderAnswer, 304: NoContent, ...errors(404) },
  handle: (req) => readOrder(req.ctx, req.params.account, order(req), req.query),
})

/** The order a path names. */
const order = (req: Req<{ date: string; id: string }>) => ({ date: req.params.date, id: req.params.id })

/** If-Match, as for any record: checked on the stored order inside the write's transaction. */
const ifMatch = (req: Req) => ifMatchDoc(req, `callback order ${req.params.id}`)

export const callbackPatch = userRoute({
  summary: 'Move a callback order on',
  description:
    'Only its status changes, and only forward: new to viewed or done, viewed to done (409 otherwise). Answers ' +
    'the order whole, with its new ETag. With If-Match, only the version whose ETag it names is changed (412 ' +
    'otherwise).',
  params: OrderPath,
  query: NoQuery,
  body: StatusBody,
  response: { 200: OrderAnswer, ...errors(404, 409, 412) },
  handle: async (req) =>
    newVersion(req, await patchOrder(req.ctx, req.params.account, order(req), req.body, ifMatch(req))),
})

export const callbackDelete = userRoute({
  summary: 'Delete a callback order',
  description: 'With If-Match, only the version whose ETag it names is deleted (412 otherwise).',
  params: OrderPath,
  query: NoQuery,
  response: { 204: NoContent, ...errors(404, 412) },
  handle: (req) => deleteOrder(req.ctx, req.params.account, order(req), ifMatch(req)),
})
