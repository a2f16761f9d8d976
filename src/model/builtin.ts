/**
 * Classes every working domain has without defining them, as every domain has the roles `admin` and
 * `user`. Today one: `telephony/CallbackRequests`, the callback orders of SIP accounts, which the
 * user endpoints /rest/v1/user/sip/accounts/<id>/callback_requests read and change. Those endpoints
 * rely on its shape, so a built-in class cannot be deleted, and its classname, parent, storage mode,
 * partition property and properties cannot change; its name, description and other options can.
 */
import type { Doc } from '~storage/doc'
import { conflict } from '../errors'
import { NIL_UUID } from '../ids'
import type { ClassDoc } from './class-schema'

export const CALLBACK_REQUESTS = 'telephony/CallbackRequests'

/** The statuses of a callback order: new when placed, viewed, then done. */
export const CALLBACK_STATUSES = ['new', 'viewed', 'done'] as const

/** Built-in class bodies, as a client would POST them to /rest/v1/design/classes. */
export const BUILTIN_CLASSES: readonly (Doc & { classname: string })[] = [
  {
    classname: CALLBACK_REQUESTS,
    name: 'Callback orders',
    description: 'Callback orders left for a SIP account; boxPhoneNumber is the account phone number.',
    storage_mode: 'history',
    properties: [
      { name: 'abonentPhoneNumber', data_type: 'string', required: true },
      { name: 'boxPhoneNumber', data_type: 'string', required: true },
      { name: 'dateTime', data_type: 'datetime', required: true },
      { name: 'status', data_type: 'enum', items: [...CALLBACK_STATUSES], required: true, default: 'new' },
    ],
    opts: {
      title: 'Callback orders',
      partition_property: 'dateTime',
      partition_interval: 'day',
      // an account's list: its box, newest first
      indexes: [['boxPhoneNumber', 'dateTime']],
    },
  },
]

const builtin = new Map(BUILTIN_CLASSES.map((c) => [c.classname, c]))

/** What the endpoints built on a class rely on, in one comparable form (captions may differ). */
function shape(c: Doc): string {
  const props = ((c.properties as Doc[] | undefined) ?? []).map((p) => [
    p.name,
    p.data_type,
    p.multi === true,
    p.required === true,
    p.default ?? null,
    p.items ?? null,
  ])
  const partition = (c.opts as Doc | undefined)?.partition_property ?? ''
  return JSON.stringify([c.parent_id ?? NIL_UUID, c.storage_mode ?? 'runtime', partition, props])
}

/**
 * Inside a class's write: a built-in class is never deleted or renamed, and whatever a write makes of
 * a class with a built-in classname has the built-in shape (so a write may also restore it).
 */
export function checkBuiltinClass(before: ClassDoc | undefined, after: ClassDoc | undefined): void {
  if (before && builtin.has(before.classname) && after?.classname !== before.classname) {
    throw conflict(`${before.classname} is a built-in class: it cannot be deleted or renamed`, 'classname')
  }
  const def = after && builtin.get(after.classname)
  if (def && shape(after) !== shape(def)) {
    throw conflict(
      `${def.classname} is a built-in class: its parent, storage mode, partition property and properties cannot change`,
      'properties',
    )
  }
}
