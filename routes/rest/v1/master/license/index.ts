import { getLicenceRoute, postLicenceRoute } from '~/master/licence-api'

export const GET = getLicenceRoute
export const POST = postLicenceRoute
