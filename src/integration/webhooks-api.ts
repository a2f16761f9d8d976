/** The routes of webhook subscriptions and of a channel's delivery log; the rules are in webhooks.ts and deliveries.ts. */
import * as v from 'valibot'
import { NOT_FOUND } from '../http/collection-schemas'
import { LIST_PARAMS, NoQuery, queryOf } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, errors, IdParams, UuidParam } from '../http/schemas'
import { Instant } from '../values'
import { channels } from './channels'
import { deliveryLog, replayDelivery } from './deliveries'
import {
  listSubscriptions,
  readSubscription,
  renew,
  SubscriptionBody,
  SubscriptionObjects,
  subscribe,
  unsubscribe,
} from './webhooks'

// Any authorized caller reaches the handlers, which admit `subscr` channel tokens only (403 for the rest)
const SUBSCRIBER = { access: 'session', domainKind: 'working' } as const
const FOR_SUBSCRIBERS =
  'Takes the token of a `subscr` integration channel of a working domain (403 for any other caller).'
const UNKNOWN_ID = "404 `token not found` for an id that was never the channel's."

/** A subscription's id: the service makes UUIDs, but a stranger id is a 404 like any unknown one. */
const SubscriptionParams = v.object({ id: v.string() })
const Subscribed = v.strictObject({ id: v.string(), msg: v.literal('subscribed') })

export const subscribeRoute = defineRoute({
  ...SUBSCRIBER,
  summary: 'Subscribe the calling channel to events',
  description: `${FOR_SUBSCRIBERS} The subscription lasts \`expires\` seconds unless renewed; 409 when the channel holds the most it may.`,
  query: NoQuery,
  body: SubscriptionBody,
  response: { 200: answer(Subscribed), ...errors(409) },
  handle: (req) => subscribe(req.ctx, req.body),
})

/** Beyond the spec: what a channel holds, so a client (the console) can show and manage them. */
export const listSubscriptionsRoute = defineRoute({
  ...SUBSCRIBER,
  summary: "List the calling channel's subscriptions",
  description: `${FOR_SUBSCRIBERS} Its live subscriptions (at most 100), soonest to lapse first, each with its terms as read back and \`until\`, when it lapses unless renewed.`,
  query: NoQuery,
  response: {
    200: answer(
      v.array(
        v.strictObject({
          id: v.string(),
          events: v.array(v.string()),
          objects: SubscriptionObjects,
          url: v.pipe(v.string(), v.description("where its events go: its own url, else the channel's")),
          until: Instant,
        }),
      ),
    ),
  },
  handle: (req) => listSubscriptions(req.ctx),
})

export const readSubscriptionRoute = defineRoute({
  ...SUBSCRIBER,
  summary: 'Read a subscription of the calling channel',
  description: `${FOR_SUBSCRIBERS} Its terms, or \`[]\` once it lapsed or was removed. ${UNKNOWN_ID}`,
  params: SubscriptionParams,
  query: NoQuery,
  response: {
    200: answer(
      v.union([
        v.strictObject({ objects: SubscriptionObjects, events: v.array(v.string()), url: v.string() }),
        v.strictTuple([]),
      ]),
    ),
    ...NOT_FOUND,
  },
  handle: (req) => readSubscription(req.ctx, req.params.id),
})

export const renewRoute = defineRoute({
  ...SUBSCRIBER,
  summary: 'Renew and replace a subscription of the calling channel',
  description: `${FOR_SUBSCRIBERS} Replaces its terms and starts its lifetime anew; a lapsed one comes back, unless the channel holds the most it may (409). ${UNKNOWN_ID}`,
  params: SubscriptionParams,
  query: NoQuery,
  body: SubscriptionBody,
  response: { 200: answer(Subscribed), ...NOT_FOUND, ...errors(409) },
  handle: (req) => renew(req.ctx, req.params.id, req.body),
})

export const unsubscribeRoute = defineRoute({
  ...SUBSCRIBER,
  summary: 'Remove a subscription of the calling channel',
  description: `${FOR_SUBSCRIBERS} It ends at once on every process. ${UNKNOWN_ID}`,
  params: SubscriptionParams,
  query: NoQuery,
  response: { 200: answer(v.strictObject({ id: v.string(), msg: v.literal('unsubscribed') })), ...NOT_FOUND },
  handle: (req) => unsubscribe(req.ctx, req.params.id),
})

/** One line of a channel's delivery log. */
const Delivery = v.strictObject({
  id: v.pipe(v.string(), v.description('the delivery: also its webhook-id header')),
  event: v.pipe(v.string(), v.description('CLASS.EVENT')),
  status: v.picklist(['pending', 'running', 'done', 'failed']),
  attempts: v.number(),
  created: Instant,
  finished: v.nullable(Instant),
  url: v.string(),
  http_status: v.pipe(v.nullable(v.number()), v.description("the receiver's status, null before an answer")),
  latency_ms: v.nullable(v.number()),
  last_error: v.nullable(v.string()),
})

const { limit, offset, mask } = LIST_PARAMS

export const deliveryLogRoute = defineRoute({
  domainKind: channels.domainKind,
  summary: "List a channel's webhook deliveries",
  description:
    'Newest first, `limit` (100 unless given, at most 1000) after `offset`, the fields a `mask` names: ' +
    'attempts, status, latency and the last error of each. Another query parameter is a 400 naming it.',
  params: IdParams,
  query: queryOf({ limit, offset, mask }),
  response: { 200: answer(v.array(v.partial(Delivery))), ...NOT_FOUND },
  handle: (req) => deliveryLog(req.ctx, req.params.id, req.query),
})

export const replayRoute = defineRoute({
  domainKind: channels.domainKind,
  summary: 'Send a failed delivery again',
  description: 'Its attempts are counted anew; answers its log line. 409 when the delivery has not failed.',
  params: v.object({ id: UuidParam, job: UuidParam }),
  query: NoQuery,
  response: { 200: answer(Delivery), ...NOT_FOUND, ...errors(409) },
  handle: (req) => replayDelivery(req.ctx, req.params.id, req.params.job),
})
