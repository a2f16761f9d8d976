/** GET /rest/v1/service/integration_tokens/<token>: whether a channel token belongs to the current domain. */
import * as v from 'valibot'
import { ApiError } from '../errors'
import { NOT_FOUND } from '../http/collection-schemas'
import { NoQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer } from '../http/schemas'
import { Uuid } from '../values'
import { channelByToken, channels } from './channels'

const TokenAnswer = v.strictObject({
  domain: v.pipe(v.string(), v.description('the name of the current domain')),
  integration_point: v.strictObject({
    id: Uuid,
    _links: v.strictObject({ self: v.strictObject({ href: v.string() }) }),
  }),
})

/** GET /rest/v1/service/integration_tokens/:token: the channel of a token of the current domain. */
export const checkToken = defineRoute({
  summary: 'Check a channel token',
  description:
    'Whether a local token belongs to a channel of the current domain: answers the channel and a link to it; ' +
    '404 `Token not found` otherwise (also for a token of another domain).',
  params: v.object({ token: v.string() }),
  query: NoQuery,
  response: { 200: answer(TokenAnswer), ...NOT_FOUND },
  async handle(req) {
    const found = await channelByToken(req.deps, req.params.token)
    if (!found || found.domain !== req.ctx.domain) throw new ApiError(404, 'Token not found')
    const domain = await req.deps.access.domainInfo(req.ctx.domain)
    const id = found.channel.id
    return {
      domain: domain?.name ?? '',
      integration_point: { id, _links: { self: { href: `${channels.path}/${id}` } } },
    }
  },
})
