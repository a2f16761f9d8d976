/**
 * Callback orders of a SIP account (/rest/v1/user/sip/accounts/<id>/callback_requests): the records
 * of the built-in class telephony/CallbackRequests whose boxPhoneNumber is the account's phone
 * number, for the user the account is attached to. Reads and writes are the model's record
 * functions with that scope, so a change is journaled (objtype model/telephony/CallbackRequests) and
 * becomes a modelevents.data_changed event like any record's.
 */
import type { Doc } from '~storage/doc'
import type { FilterNode, OrderItem } from '~storage/query'
import type { Ctx } from '../context'
import { sipusers } from '../directory/sipusers'
import { badRequest, conflict, notFound } from '../errors'
import { isUuid, NIL_UUID } from '../ids'
import { CALLBACK_REQUESTS } from '../model/builtin'
import type { ClassModel } from '../model/class-model'
import { validateRecord } from '../model/properties'
import { withCurrentModel } from '../model/current-model'
import type { PushTarget } from '../ws/push-target'
import { changeRecord, deleteRecord, listRecords, type RecordCheck, readRecord, type Scope } from '../model/records'
import type { Target } from '../model/partitions'

type Query = Record<string, string | undefined>

/** The orders of one account: the class, and the scope of its box (null: the account has no number). */
interface Box {
  model: ClassModel
  scope: Scope | null
}

const NEWEST_FIRST: OrderItem[] = [{ field: 'dateTime', desc: true }]

/** Where an order may go from each status; staying is no change. */
const NEXT: Record<string, readonly string[]> = {
  new: ['new', 'viewed', 'done'],
  viewed: ['viewed', 'done'],
  done: ['done'],
}

/**
 * The caller's own SIP account and the order class. An account of another user and one that does
 * not exist get the same 404, so a caller learns nothing about accounts that are not theirs.
 */
async function boxOf(ctx: Ctx, accountId: string): Promise<Box> {
  const account = await ctx.deps.repo(sipusers.table).get(ctx.domain, accountId)
  // an account attached to nobody holds the nil UUID, which is also the system actor's id
  if (!account || account.iduser === NIL_UUID || account.iduser !== ctx.actor.id) {
    throw notFound('no such SIP account of this user')
  }
  const model = (await ctx.deps.model.classes(ctx.domain)).get(CALLBACK_REQUESTS)
  if (!model) throw notFound(`this domain has no ${CALLBACK_REQUESTS} class yet`)
  const phone = account.phonenumber
  return { model, scope: typeof phone === 'string' && phone !== '' ? { boxPhoneNumber: phone } : null }
}

const ACCOUNT_ORDERS = /^\/rest\/v1\/user\/sip\/accounts\/([^/]+)\/callback_requests$/

/**
 * A websocket subscription to an account's orders (`classpath` = the list's path): the order class,
 * narrowed to the account's box. Someone else's account is the same 404 as over REST.
 */
export async function accountOrdersTarget(ctx: Ctx, classpath: string): Promise<PushTarget | null> {
  const account = ACCOUNT_ORDERS.exec(classpath)?.[1]
  if (account === undefined) return null
  if (!isUuid(account)) throw badRequest('classpath: the account of callback_requests is a UUID', 'classpath')
  const id = account.toLowerCase()
  const { model, scope } = await boxOf(ctx, id)
  const phone = scope?.boxPhoneNumber
  const where: FilterNode = phone
    ? { op: '==', left: { field: 'boxPhoneNumber' }, right: { value: phone } }
    : { op: 'in', left: { field: 'id' }, values: [] } // no number, no orders
  // at delivery: the account must still be the subscriber's, with the number the view was made for
  const guard = async (now: Ctx) => {
    const current = await now.deps.repo(sipusers.table).get(now.domain, id)
    return current?.iduser === now.actor.id && current.phonenumber === phone
  }
  return {
    classpath,
    dataClass: model.classname,
    fields: model.fields,
    where,
    guard,
    objtype: `model/${model.classname}`,
  }
}

/** Orders of one day (`date`) or of `interval`, newest first unless the client orders them. */
export async function listOrders(ctx: Ctx, accountId: string, date: string | null, params: Query) {
  const { model, scope } = await boxOf(ctx, accountId)
  const target: Target = { date, id: null }
  if (!scope) return [] // an account without a phone number has no box
  return listRecords(ctx, model, target, params, { scope, defaultOrder: NEWEST_FIRST })
}

/** A box without a number holds no order. */
function reachable(box: Box, id: string): Scope {
  if (!box.scope) throw notFound(`no record ${id} in ${CALLBACK_REQUESTS}`)
  return box.scope
}

export async function readOrder(ctx: Ctx, accountId: string, t: Target & { id: string }, params: Query) {
  const box = await boxOf(ctx, accountId)
  return readRecord(ctx, box.model, t, params, reachable(box, t.id))
}

/**
 * PATCH `{status}` (the route's schema lets no other member through; the id, when given, is checked to
 * be the addressed one): the status moves only forward (new → viewed → done, or new → done).
 */
export async function patchOrder(
  ctx: Ctx,
  accountId: string,
  t: Target & { id: string },
  input: { id?: string; status: string },
  check?: RecordCheck,
) {
  const box = await boxOf(ctx, accountId)
  const scope = reachable(box, t.id)
  const make =
    (model: ClassModel) =>
    (given: Doc, cur: Doc): Doc => {
      const next = validateRecord({ status: given.status }, model.rules, 'patch', cur)
      const from = String(cur.status)
      if (!(NEXT[from] ?? []).some((s) => s === next.status)) {
        throw conflict(`status: a ${from} callback order cannot become ${String(next.status)}`, 'status')
      }
      return next
    }
  return withCurrentModel(ctx, box.model, (m) => changeRecord(ctx, m, t, input, make(m), scope, check))
}

export async function deleteOrder(ctx: Ctx, accountId: string, t: Target & { id: string }, check?: RecordCheck) {
  const box = await boxOf(ctx, accountId)
  await deleteRecord(ctx, box.model, t, reachable(box, t.id), check)
}
