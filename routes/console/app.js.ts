// The console's one script.
import { consoleScript } from '~/console/console'

export const GET = consoleScript
