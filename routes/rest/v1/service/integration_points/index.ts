import { channels } from '~/integration/channels'
import { createChannelRoute } from '~/integration/channels-api'
import { list, lookup } from '~/http/resource'

export const GET = list(channels)
export const POST = createChannelRoute
export const LOOKUP = lookup(channels)
