// The console's stylesheet.
import { consoleStyle } from '~/console/console'

export const GET = consoleStyle
