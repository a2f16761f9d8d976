// Readiness: database, migrations and the shared store answer (503 naming what does not).
import { readyzRoute } from '~/ops/health'

export const GET = readyzRoute
