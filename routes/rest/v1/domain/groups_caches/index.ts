import { groupsCaches } from '~/directory/caches-api'
import { list } from '~/http/resource'

export const GET = list(groupsCaches)
