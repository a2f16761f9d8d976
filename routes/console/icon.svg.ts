// The console's icon, so the browser asks for no /favicon.ico.
import { consoleIcon } from '~/console/console-api'

export const GET = consoleIcon
