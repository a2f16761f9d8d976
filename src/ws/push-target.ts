/**
 * A collection whose changes a websocket subscription receives. Declared apart from the resolution
 * (collections.ts), so the areas that offer such a view (callbacks/callback-orders.ts) need not import it back.
 */
import type { FilterNode } from '~storage/query'
import type { Ctx } from '../context'
import type { FieldSet } from '../query/fields'

export interface PushTarget {
  /** The REST path of the collection, as subscribed. */
  classpath: string
  /** The data class its changes carry (`data.class`): an entity's objtype or a model classname. */
  dataClass: string
  /** Paths a subscription's filter and order may name. */
  fields: FieldSet
  /** Conditions every pushed instance must also meet (a collection that is a view of a class). */
  where?: FilterNode
  /**
   * Whether the subscriber may still see this view at delivery (the account is still theirs and
   * still has the number the view was made for); asked once per event and subscriber.
   */
  guard?: (ctx: Ctx) => boolean | Promise<boolean>
  /** The journal's objtype of the data class, to replay only this collection's changes. */
  objtype: string
}
