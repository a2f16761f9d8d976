/**
 * Platform events: a class and a name, a domain, the objects they are bound to, and a payload.
 * Every committed journal record becomes `modelevents.data_changed` (operation 0 delete, 1 create,
 * 2 modify; old and new instance; who made the change): the journal pump worker
 * (src/workers/journal-pump.ts) publishes them on the bus; other sources (scripts, telephony)
 * publish their own events there.
 */
import type { Doc } from '~storage/doc'
import type { JournalChange, JournalChangeText } from '~storage/journal'

export interface PlatformEvent {
  /**
   * A UUID v7 given when the event enters the bus (ingest, script `emit`), so consumers can tell
   * one event from another (webhook delivery dedupes on it); journal events have `seq` instead.
   */
  id?: string
  /** Event class and name: `modelevents` / `data_changed`. */
  class: string
  event: string
  /** Domain id. */
  domain: string
  time: string
  /** What the event is bound to, for subscriptions: `{type: 'class', value: 'users'}`, `{type: 'sipuser', value: '101'}`. */
  objects: { type: string; value: string }[]
  data: Doc
  /** Journal sequence number, for events from the journal. */
  seq?: number
  /**
   * A data change's journal objtype (`user`, `model/orders`): tells an entity's collection from a
   * model class's that carries the same `data.class`, to check read permission on the right one.
   */
  objtype?: string
  /**
   * Its webhook deliveries are queued already (ingest queues them before it answers, so an accepted
   * event's deliveries survive a crash): the `webhook-events` worker passes it over.
   */
  queued?: true
}

const OPERATION = { delete: 0, create: 1, update: 2 } as const

/** The data class of a journal record: a model record's classname, else the entity type. */
export const dataClassOf = (objtype: string) => (objtype.startsWith('model/') ? objtype.slice(6) : objtype)

export function dataChanged(c: JournalChange): PlatformEvent {
  const dataClass = dataClassOf(c.objtype)
  return {
    class: 'modelevents',
    event: 'data_changed',
    domain: c.domain,
    time: c.dtutc,
    seq: c.seq,
    objtype: c.objtype,
    objects: [{ type: 'class', value: dataClass }],
    data: {
      class: dataClass,
      operation: OPERATION[c.cmdtype],
      id: c.objid,
      // before the change (after it, for a create); after it (before it, for a delete)
      old: c.cmdtype === 'update' ? c.prev : c.obj,
      new: c.obj,
      initiator_type: c.initiator,
      initiator_id: c.modifierid,
    },
  }
}

const json = JSON.stringify

/**
 * `JSON.stringify(dataChanged(c))`, made from a record whose obj and prev are still the JSON text
 * they were stored as (by JSON.stringify): the pump publishes a create without parsing its record
 * and writing it out again (tests/events/event-text.test.ts holds the two equal).
 */
export function dataChangedText(c: JournalChangeText): string {
  const dataClass = json(dataClassOf(c.objtype))
  const old = c.cmdtype === 'update' ? (c.prev ?? 'null') : c.obj
  return (
    `{"class":"modelevents","event":"data_changed","domain":${json(c.domain)},"time":${json(c.dtutc)},` +
    `"seq":${c.seq},"objtype":${json(c.objtype)},"objects":[{"type":"class","value":${dataClass}}],"data":{"class":${dataClass},` +
    `"operation":${OPERATION[c.cmdtype]},"id":${json(c.objid)},"old":${old},"new":${c.obj},` +
    `"initiator_type":${json(c.initiator)},"initiator_id":${json(c.modifierid)}}}`
  )
}
