// Scalar's bundle, served from this origin for the API page.
import { scalarScript } from '~/ops/openapi-api'

export const GET = scalarScript
