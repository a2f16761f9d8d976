// What starts Scalar on the API description.
import { startScript } from '~/ops/openapi-api'

export const GET = startScript
