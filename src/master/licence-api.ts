/** Routes of /rest/v1/master/license (master domain only). */
import { parseBoolParam, refuseUnknownParams } from '../http/list-query'
import { defineRoute } from '../http/route'
import { getLicence, installLicence } from './licence'

export const getLicenceRoute = defineRoute({
  domainKind: 'master',
  handle: (req) => {
    refuseUnknownParams(req.query, ['file'])
    return getLicence(req.ctx, parseBoolParam(req.query.file, 'file'))
  },
})

export const postLicenceRoute = defineRoute({
  domainKind: 'master',
  handle: async (req) => installLicence(req.ctx, await req.json()),
})
