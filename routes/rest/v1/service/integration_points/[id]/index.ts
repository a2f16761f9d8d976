import { channels } from '~/integration/channels'
import { readChannelRoute } from '~/integration/channels-api'
import { patch, remove } from '~/http/resource'

export const GET = readChannelRoute
export const PATCH = patch(channels)
export const DELETE = remove(channels)
