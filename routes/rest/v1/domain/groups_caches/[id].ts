import { groupsCaches } from '~/directory/cache-collections'
import { read } from '~/http/resource'

export const GET = read(groupsCaches)
