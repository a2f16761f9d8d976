// The API description (OpenAPI 3.1), with the caller's model classes when signed in.
import { openApiRoute } from '~/ops/openapi-api'

export const GET = openApiRoute
