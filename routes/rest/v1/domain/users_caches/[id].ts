import { usersCaches } from '~/directory/cache-collections'
import { patchUserCache } from '~/directory/caches-api'
import { read } from '~/http/resource'

export const GET = read(usersCaches)
export const PATCH = patchUserCache
