// The API description as a page.
import { apiPageRoute } from '~/ops/openapi-api'

export const GET = apiPageRoute
