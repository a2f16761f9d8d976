// The admin console.
import { consolePage } from '~/console/console'

export const GET = consolePage
