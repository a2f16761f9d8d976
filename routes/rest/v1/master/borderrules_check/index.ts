import { checkBorderRules } from '~/master/borderrules-api'

/** Which border rule applies to a request described by the query (`ip` required). */
export const GET = checkBorderRules
