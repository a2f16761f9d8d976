/** The channel routes beyond the standard ones: a create that shows the signing secret once, and its rotation. */
import { domainFilesDir } from '~storage/files'
import * as v from 'valibot'
import { notFound } from '../errors'
import { itemAnswer, NOT_FOUND } from '../http/collection-schemas'
import { parseFlat, parseMask } from '../query/list-query'
import { present } from '../query/present'
import { ITEM_PARAMS, NoQuery, queryOf } from '../http/query-schemas'
import { versionText } from '../http/if-match'
import { defineRoute } from '../http/route'
import { answer, errors, IdParams } from '../http/schemas'
import { channels, createChannel, rotateSecret } from './channels'
import { quotaFigures } from './file-quota'

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

const bytes = (what: string) => v.pipe(v.number(), v.description(what))
/** What the domain's channel files hold and may hold (FILES_QUOTA_BYTES, FILES_QUOTA_FILES; 0: no bound). */
const FilesQuota = v.strictObject({
  bytes_used: bytes("bytes the domain's channel files hold"),
  bytes_limit: bytes('FILES_QUOTA_BYTES (0: no bound)'),
  files_used: bytes('files the domain holds'),
  files_limit: bytes('FILES_QUOTA_FILES (0: no bound)'),
})

const ReadChannel = v.strictObject({
  ...(itemAnswer(channels).schema as unknown as v.StrictObjectSchema<v.ObjectEntries, undefined>).entries,
  files_quota: v.optional(FilesQuota),
})

/** GET /rest/v1/service/integration_points/:id: the channel, and whole, the quota figures of the domain's files. */
export const readChannelRoute = defineRoute({
  domainKind: channels.domainKind,
  summary: 'Read an integration channel',
  description:
    'The channel whole (or the members a `mask` names). Whole, it adds `files_quota`: the bytes and files ' +
    "the domain's channel files hold, and the limits (FILES_QUOTA_BYTES, FILES_QUOTA_FILES; 0: no bound).",
  params: IdParams,
  query: queryOf(ITEM_PARAMS),
  response: { 200: answer(ReadChannel), ...NOT_FOUND },
  async handle(req) {
    const { ctx } = req
    const doc = await req.deps.repo(channels.table).get(ctx.domain, req.params.id)
    if (!doc) throw notFound(`${channels.name} ${req.params.id} not found`)
    const mask = req.query.mask === undefined ? null : parseMask(req.query.mask, channels.fields)
    const flat = parseFlat(req.query.flat)
    if (mask || flat) return present(doc, mask, flat)
    const dir = domainFilesDir(ctx.deps.config.dataDir, ctx.domain)
    // the tag is the stored channel's, the one If-Match checks: the domain's file figures are no part of it
    return versionText({ ...doc, files_quota: await quotaFigures(ctx, dir) }, ['files_quota'])
  },
})
