import { subordinationsCaches } from '~/directory/cache-collections'
import { list } from '~/http/resource'

export const GET = list(subordinationsCaches)
