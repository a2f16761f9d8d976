import { extobjs } from '~/reference/extobjs'
import { list } from '~/http/resource'

/** The extobj list restricted to the `type` in the path. */
export const GET = list(extobjs, { match: (req) => ({ type: req.params.type ?? '' }) })
