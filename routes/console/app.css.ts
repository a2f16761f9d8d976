// The console's stylesheet, from the same bundle as its script.
import { consoleStyle } from '~/console/console-api'

export const GET = consoleStyle
