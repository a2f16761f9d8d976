// The websocket's description (AsyncAPI 3.0).
import { asyncApiRoute } from '~/ops/openapi-api'

export const GET = asyncApiRoute
