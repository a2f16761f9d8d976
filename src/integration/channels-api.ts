/** The channel routes beyond the standard ones: a create that shows the signing secret once, and its rotation. */
import * as v from 'valibot'
import { itemAnswer, NOT_FOUND } from '../http/collection-schemas'
import { NoQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, errors, IdParams } from '../http/schemas'
import { channels, createChannel, rotateSecret } from './channels'

const Secret = v.pipe(
  v.string(),
  v.startsWith('whsec_'),
  v.description('the Standard Webhooks signing secret: `whsec_` and the base64 of 32 random bytes'),
)

/** The stored channel, with the secret its create shows this once. */
const CreatedChannel = v.strictObject({
  ...(itemAnswer(channels).schema as unknown as v.StrictObjectSchema<v.ObjectEntries, undefined>).entries,
  secret: Secret,
})

/** POST /rest/v1/service/integration_points: the stored channel plus `secret`, which no read shows again. */
export const createChannelRoute = defineRoute({
  domainKind: channels.domainKind,
  summary: 'Create an integration channel',
  description:
    'Answers the channel as stored, with its generated `token_local` and its webhook signing `secret`, which ' +
    'no read shows again. 409 when the code is taken in the domain; 403 when the licence allows no more ' +
    'channels of the type.',
  query: NoQuery,
  body: channels.createBody,
  response: { 200: answer(CreatedChannel), ...errors(409) },
  // the entity's create validates and normalizes the body as sent, as every create does
  handle: async (req) => createChannel(req.ctx, await req.json()),
})

/** POST /rest/v1/service/integration_points/:id/secret: `{id, secret}`, the new secret; the old one stops counting. */
export const rotateSecretRoute = defineRoute({
  domainKind: channels.domainKind,
  summary: "Rotate a channel's webhook signing secret",
  description:
    'Answers the new secret this once; deliveries are signed with it from now on, the old one stops counting.',
  params: IdParams,
  query: NoQuery,
  response: { 200: answer(v.strictObject({ id: v.string(), secret: Secret })), ...NOT_FOUND },
  handle: (req) => rotateSecret(req.ctx, req.params.id),
})
