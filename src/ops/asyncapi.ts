/**
 * The websocket /ws described for clients (AsyncAPI 3.0): frames are JSON arrays `[capability,
 * payload]`. A client sends `rest` frames (a REST call: the same routes, permissions and answers as
 * over HTTP) and `subscribe` frames; the service answers each, and sends `event` frames to the
 * subscriptions they match. The payloads are the valibot schemas below, in JSON Schema (draft 7).
 */
import { toJsonSchema } from '@valibot/to-json-schema'
import * as v from 'valibot'
import pkg from '../../package.json' with { type: 'json' }
import { ErrorBody } from '../http/schemas'

const Qid = v.pipe(
  v.union([v.string(), v.number()]),
  v.description("the client's id of the call, echoed in its answer"),
)

const RestCall = v.strictObject({
  qid: Qid,
  operation: v.picklist(['read', 'create', 'replace', 'update', 'delete', 'clear', 'lookup']),
  classpath: v.pipe(v.string(), v.description('the REST path of a collection, such as /rest/v1/domain/users')),
  id: v.optional(v.pipe(v.string(), v.description('the item; read without it lists the collection'))),
  content: v.optional(v.pipe(v.unknown(), v.description('the body of create, replace, update and lookup'))),
  filter: v.optional(v.unknown()),
  mask: v.optional(v.union([v.string(), v.array(v.string())])),
  order: v.optional(v.unknown()),
  offset: v.optional(v.number()),
  limit: v.optional(v.number()),
  flat: v.optional(v.boolean()),
  interval: v.optional(v.unknown()),
})
const RestAnswer = v.union([
  v.strictObject({ qid: Qid, result: v.pipe(v.unknown(), v.description('what the REST call answers (null for 204)')) }),
  v.strictObject({ qid: Qid, error: ErrorBody }),
])
const Subscribe = v.strictObject({
  id: v.pipe(v.string(), v.description("the subscription's id (the same id renews it)")),
  expires: v.pipe(v.number(), v.description('seconds it lives; 0 ends it')),
  events: v.optional(v.pipe(v.array(v.string()), v.description('event masks: class.event, class.*, *.*'))),
  objects: v.optional(v.array(v.unknown())),
  classpath: v.optional(v.pipe(v.string(), v.description('changes of this collection only'))),
  exargs: v.optional(v.strictObject({ filter: v.optional(v.unknown()), mask: v.optional(v.unknown()) })),
  since: v.optional(
    v.pipe(v.number(), v.description('a journal sequence number: the changes after it are replayed first')),
  ),
})
const Subscribed = v.strictObject({ id: v.string(), expires: v.number() })
const Event = v.strictObject({
  subscription: v.string(),
  class: v.string(),
  event: v.string(),
  seq: v.nullable(v.number()),
  data: v.unknown(),
})

const schema = (s: v.GenericSchema) => {
  const { $schema: _, ...json } = toJsonSchema(s, { target: 'draft-07', errorMode: 'ignore' }) as Record<
    string,
    unknown
  >
  return json
}

/** `[capability, payload]`. */
const frame = (capability: string, payload: v.GenericSchema, title: string, summary: string) => ({
  name: capability,
  title,
  summary,
  contentType: 'application/json',
  payload: {
    type: 'array',
    items: [{ type: 'string', const: capability }, schema(payload)],
    minItems: 2,
    maxItems: 2,
  },
})

const ref = (path: string) => ({ $ref: `#/${path}` })

export function asyncApiDocument(publicUrl: string) {
  const url = new URL(publicUrl)
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Platform service websocket',
      version: pkg.version,
      description:
        'One socket per client at /ws, opened with the session cookie, `Authorization: Bearer <session token>` or an ' +
        "integration channel's token. Frames are JSON arrays [capability, payload].",
    },
    defaultContentType: 'application/json',
    servers: {
      service: {
        host: url.host,
        protocol: url.protocol === 'https:' ? 'wss' : 'ws',
        pathname: '/ws',
        security: [ref('components/securitySchemes/bearer'), ref('components/securitySchemes/cookie')],
      },
    },
    channels: {
      socket: {
        address: '/ws',
        messages: {
          restCall: ref('components/messages/restCall'),
          restAnswer: ref('components/messages/restAnswer'),
          subscribe: ref('components/messages/subscribe'),
          subscribed: ref('components/messages/subscribed'),
          event: ref('components/messages/event'),
          error: ref('components/messages/error'),
        },
      },
    },
    operations: {
      callRest: {
        action: 'receive',
        channel: ref('channels/socket'),
        summary: 'A REST call over the socket, answered with its qid',
        messages: [ref('channels/socket/messages/restCall')],
        reply: { channel: ref('channels/socket'), messages: [ref('channels/socket/messages/restAnswer')] },
      },
      subscribe: {
        action: 'receive',
        channel: ref('channels/socket'),
        summary: 'Subscribe, renew or end a subscription',
        messages: [ref('channels/socket/messages/subscribe')],
        reply: { channel: ref('channels/socket'), messages: [ref('channels/socket/messages/subscribed')] },
      },
      sendEvent: {
        action: 'send',
        channel: ref('channels/socket'),
        summary: 'An event a subscription matches (a change of the journal, a custom event)',
        messages: [ref('channels/socket/messages/event')],
      },
      refuseFrame: {
        action: 'send',
        channel: ref('channels/socket'),
        summary: 'A frame the socket cannot use: the socket stays open',
        messages: [ref('channels/socket/messages/error')],
      },
    },
    components: {
      messages: {
        restCall: frame('rest', RestCall, 'REST call', 'A REST call: operation on the collection at classpath'),
        restAnswer: frame('rest', RestAnswer, 'REST answer', "The call's answer, or its error body"),
        subscribe: frame('subscribe', Subscribe, 'Subscribe', 'Events to be sent, and for how long'),
        subscribed: frame('subscribe', Subscribed, 'Subscribed', 'The subscription as it now stands'),
        event: frame('event', Event, 'Event', 'An event for a subscription'),
        error: frame('error', ErrorBody, 'Error', 'Why a frame was refused'),
      },
      securitySchemes: {
        bearer: { type: 'httpApiKey', name: 'Authorization', in: 'header', description: 'Bearer <session token>' },
        cookie: { type: 'httpApiKey', name: 'RSession', in: 'cookie', description: 'the session cookie' },
      },
    },
  }
}
