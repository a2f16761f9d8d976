import * as v from 'valibot'
import { list } from '~/http/resource'
import { extobjs } from '~/reference/extobjs'

const ofType = list(extobjs, { match: (req) => ({ type: req.params.type ?? '' }) })

/** The extobj list restricted to the `type` in the path: the list's spec, with the path's parameter declared. */
export const GET = {
  ...ofType,
  hook: {
    ...ofType.hook,
    params: v.object({ type: v.pipe(v.string(), v.description('the type of the extobjs listed')) }),
    detail: {
      ...ofType.hook.detail,
      summary: 'List the extobjs of a type',
      description: `Only those of the type in the path. ${ofType.hook.detail.description}`,
    },
  },
}
