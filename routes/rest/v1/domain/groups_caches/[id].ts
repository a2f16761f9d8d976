import { groupsCaches } from '~/directory/caches-api'
import { read } from '~/http/resource'

export const GET = read(groupsCaches)
