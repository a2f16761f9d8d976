/**
 * Channel tokens: `Authorization: Bearer <token_local>` authorizes a request as the channel
 * (GET /rest/v1/service/integration_tokens/<token>, which says whether a token belongs to the
 * current domain, is in ./tokens-api.ts). Tokens are looked up in the database on every request
 * (an indexed read), so a deleted channel's token, or a changed mask or role list, applies at once
 * on every process.
 */
import { type Ctx, integrationCtx } from '../context'
import type { Deps } from '../deps'
import { ApiError } from '../errors'
import { inCidrs, parseCidr } from '../net/cidr'
import { channelByToken } from './channels'

/**
 * The context a channel token authorizes (over any transport), or null when no channel has it. A
 * client address outside the channel's `opts.sender_mask` is a 403 naming the mask.
 */
export async function channelCtx(
  deps: Deps,
  token: string,
  clientAddress: string,
  requestId: string,
): Promise<Ctx | null> {
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
