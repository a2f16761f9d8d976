// The console's script: the Preact app, bundled (built once from source, embedded in the binary).
import { consoleScript } from '~/console/console-api'

export const GET = consoleScript
