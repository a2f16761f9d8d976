// The admin console: the HTML shell of the Preact app.
import { consolePage } from '~/console/console-api'

export const GET = consolePage
