import { patchUserCache, usersCaches } from '~/directory/caches-api'
import { read } from '~/http/resource'

export const GET = read(usersCaches)
export const PATCH = patchUserCache
