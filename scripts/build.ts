/**
 * `bun run build [--target=bun-linux-arm64] [--outfile=dist/platform]`: one executable holding the
 * service, the Bun runtime, the script and reader threads and the libSQL native addon of the target, so it
 * runs from an empty folder with nothing installed. The default target is this machine's.
 */
import type { BunPlugin } from 'bun'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildConsoleBundle, type ConsoleBundle } from '../src/console/bundle'

const ROOT = join(import.meta.dir, '..')
export const DEFAULT_OUTFILE = join(ROOT, 'dist/platform')

/** This machine as a Bun compile target: bun-<os>-<arch>, with -musl on a Linux without glibc. */
export function hostTarget(): string {
  const os = process.platform === 'win32' ? 'windows' : process.platform
  const glibc = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
    ?.glibcVersionRuntime
  return `bun-${os}-${process.arch}${os === 'linux' && !glibc ? '-musl' : ''}`
}

/** The @libsql package holding the native addon for a Bun compile target (its -baseline/-modern suffix aside). */
export function libsqlAddonFor(target: string): string {
  const [, os, cpu, ...rest] = target.split('-')
  const arch = cpu === 'aarch64' ? 'arm64' : cpu
  const musl = rest.includes('musl')
  const addons: Record<string, string> = {
    'linux-x64': musl ? 'linux-x64-musl' : 'linux-x64-gnu',
    'linux-arm64': musl ? 'linux-arm64-musl' : 'linux-arm64-gnu',
    'darwin-x64': 'darwin-x64',
    'darwin-arm64': 'darwin-arm64',
    'windows-x64': 'win32-x64-msvc',
  }
  const addon = addons[`${os}-${arch}`]
  if (!addon) throw new Error(`no libSQL addon for the target ${target}`)
  return `@libsql/${addon}`
}

/**
 * libsql loads its addon with a computed `require(`@libsql/${target}`)`, which the bundler cannot
 * follow, so the binary would look for node_modules at run time. Rewritten to a static require,
 * the addon is embedded (and extracted to TMPDIR when the binary starts).
 */
function staticLibsqlAddon(addon: string): BunPlugin {
  return {
    name: 'libsql-static-addon',
    setup(build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/]libsql[\\/]index\.js$/ }, async (file) => {
        const source = await Bun.file(file.path).text()
        const rewritten = source.replace(
          'return require(`@libsql/${target}`);',
          `return require(${JSON.stringify(addon)});`,
        )
        if (rewritten === source)
          throw new Error('libsql no longer loads its addon as expected: update scripts/build.ts')
        return { contents: rewritten, loader: 'js' }
      })
    },
  }
}

/**
 * The admin console's browser bundle (Preact, src/console/app) is built from source when the service
 * runs from source; the binary carries it instead: built here first, its text replaces the module
 * src/console/embedded.ts, so the binary serves it without the sources or a bundler.
 */
function embeddedConsole(bundle: ConsoleBundle): BunPlugin {
  return {
    name: 'console-bundle',
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]console[\\/]embedded\.ts$/ }, () => ({
        contents: `export const embeddedBundle = ${JSON.stringify(bundle)}`,
        loader: 'ts',
      }))
    },
  }
}

export async function build(options: { target?: string; outfile?: string } = {}): Promise<string> {
  const target = options.target ?? hostTarget()
  const outfile = options.outfile ?? DEFAULT_OUTFILE
  const addon = libsqlAddonFor(target)
  if (!existsSync(join(ROOT, 'node_modules', addon))) {
    const version = (await Bun.file(join(ROOT, 'node_modules/libsql/package.json')).json()).version
    throw new Error(`${addon} is not installed; for ${target} run: npm install --no-save --force ${addon}@${version}`)
  }
  const consoleBundle = await buildConsoleBundle()
  const result = await Bun.build({
    // The threads are entrypoints too: a compiled binary can only start workers it carries.
    entrypoints: [
      join(ROOT, 'server.ts'),
      join(ROOT, 'src/scripts/script-thread.ts'),
      join(ROOT, 'src/scripts/syntax-thread.ts'),
      join(ROOT, 'src/master/border-thread.ts'),
      join(ROOT, 'src/log-thread.ts'),
      join(ROOT, 'storage/db-reader-thread.ts'),
    ],
    // Flat names put the thread's file at the bundle's root, which is where a `new URL('./x.ts',
    // import.meta.url)` points once the file that starts it is bundled into the root entrypoint.
    naming: { entry: '[name].[ext]' },
    // Without a target Bun copies its own runtime; naming one may mean downloading that runtime.
    compile: options.target ? { target: options.target as Bun.Build.CompileTarget, outfile } : { outfile },
    // Function names stay, and the binary embeds its sourcemap, so stack traces name the TypeScript source.
    minify: { whitespace: true, syntax: true },
    sourcemap: 'linked',
    plugins: [staticLibsqlAddon(addon), embeddedConsole(consoleBundle)],
  })
  if (!result.success) throw new AggregateError(result.logs, 'build failed')
  // The .map files written beside the binary duplicate what it embeds.
  for (const output of result.outputs) if (output.kind === 'sourcemap') rmSync(output.path, { force: true })
  return outfile
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { target: { type: 'string' }, outfile: { type: 'string' } } })
  const started = performance.now()
  const outfile = await build(values)
  const size = Bun.file(outfile).size / 2 ** 20
  console.log(`built ${outfile} (${size.toFixed(0)} MiB) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}
