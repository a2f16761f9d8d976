/**
 * Channel tokens: `Authorization: Bearer <token_local>` authorizes a request as the channel, and
 * GET /rest/v1/service/integration_tokens/<token> says whether a token belongs to the current
 * domain. Tokens are looked up in the database on every request (an indexed read), so a deleted
 * channel's token, or a changed mask or role list, applies at once on every process.
 */
import * as v from 'valibot'
import { type Ctx, integrationCtx } from '../context'
import type { Deps } from '../deps'
import { ApiError } from '../errors'
import { inCidrs, parseCidr } from '../net/cidr'
import type { Req } from '../http/req'
import { NOT_FOUND } from '../http/collection-schemas'
import { NoQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, Uuid } from '../http/schemas'
import { channelByToken, channels } from './channels'

/**
 * The context a channel token authorizes, or null when no channel has it. A client address
 * outside the channel's `opts.sender_mask` is a 403 naming the mask.
 */
export function channelCtxFor(req: Req, token: string): Promise<Ctx | null> {
  return channelCtx(req.deps, token, req.clientAddress, req.requestId)
}

/** The same for any transport (a websocket's upgrade and frames): the token, the client's address. */
export async function channelCtx(deps: Deps, token: string, clientAddress: string, requestId: string) {
  const found = await channelByToken(deps, token)
  if (!found) return null
  const { domain, channel } = found
  const mask = channel.opts?.sender_mask ?? []
  if (mask.length > 0) {
    const cidrs = mask.flatMap((m) => parseCidr(m) ?? [])
    if (!inCidrs(clientAddress, cidrs))
      throw new ApiError(403, `the address ${clientAddress} is outside the channel's opts.sender_mask`, {
        field: 'opts.sender_mask',
      })
  }
  const roles = channel.opts?.roles ?? []
  return integrationCtx(deps, domain, { ...channel, roles, userid: channel.opts?.userid }, requestId)
}

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
