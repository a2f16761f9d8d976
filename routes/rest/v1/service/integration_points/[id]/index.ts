import { channels } from '~/integration/channels'
import { patch, read, remove } from '~/http/resource'

export const GET = read(channels)
export const PATCH = patch(channels)
export const DELETE = remove(channels)
