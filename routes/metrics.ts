// Prometheus metrics of this process.
import { metricsRoute } from '~/ops/metrics-api'

export const GET = metricsRoute
