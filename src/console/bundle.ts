/**
 * The admin console's browser code: Preact components in ./app, bundled by Bun.build into one
 * script and one stylesheet. Running from source the bundle is built once, when first asked for, and
 * kept in memory; the compiled binary carries it (./embedded.ts, filled in by scripts/build.ts).
 */
import { join } from 'node:path'
import { type ConsoleBundle, embeddedBundle } from './embedded'

export type { ConsoleBundle }

/** The console's entry point: its tsconfig gives the JSX import source (Preact) and the DOM types. */
export const CONSOLE_ENTRY = join(import.meta.dir, 'app/main.tsx')

export async function buildConsoleBundle(): Promise<ConsoleBundle> {
  const result = await Bun.build({
    entrypoints: [CONSOLE_ENTRY],
    target: 'browser',
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  if (!result.success) throw new AggregateError(result.logs, 'the console bundle did not build')
  const js = result.outputs.find((o) => o.kind === 'entry-point')
  const css = result.outputs.find((o) => o.path.endsWith('.css'))
  if (!js || !css) throw new Error('the console bundle lacks its script or stylesheet')
  return { js: await js.text(), css: await css.text() }
}

let building: Promise<ConsoleBundle> | undefined

/** The bundle: the embedded one, or built once (a failed build is tried again on the next call). */
export function consoleBundle(): Promise<ConsoleBundle> {
  if (embeddedBundle) return Promise.resolve(embeddedBundle)
  building ??= buildConsoleBundle().catch((err) => {
    building = undefined
    throw err
  })
  return building
}
