// Liveness: the process answers.
import { healthzRoute } from '~/ops/health'

export const GET = healthzRoute
