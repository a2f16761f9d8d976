/** GET /rest/v1/reference/extobjs_by_type/:type: the extobj list narrowed to the type in the path. */
import * as v from 'valibot'
import { list } from '../http/resource'
import { extobjs } from './extobjs'

export const extobjsOfType = list(extobjs, {
  params: v.object({ type: v.pipe(v.string(), v.description('the type of the extobjs listed')) }),
  match: (req) => ({ type: req.params.type }),
  summary: 'List the extobjs of a type',
  description: 'Only those of the type in the path.',
})
