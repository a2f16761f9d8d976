/**
 * Whether a script parses, by the parser that will run it: QuickJS compiles the source as the
 * sandbox wraps it (sandbox.ts: the body of an async function) without running it. This runs on
 * the syntax thread (syntax-thread.ts), never on the service's main thread: a 4 MB script takes a
 * while to compile, and the requests would wait.
 *
 * The QuickJS module is made on first use in the thread (about 20 MB once); each check takes a
 * context of its own, with a memory limit, and frees it.
 */
import variant from '@jitl/quickjs-singlefile-mjs-release-sync'
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core'

/** The sandbox's wrapper adds one line before the script (sandbox.ts `start`). */
const WRAPPER_LINES = 1
/** A 4 MB script (the most stored) parses well within this. */
const PARSE_MEMORY_BYTES = 256 * 1024 * 1024

let module: Promise<QuickJSWASMModule> | undefined

export interface SyntaxProblem {
  message: string
  line: number
  column: number
}

/** Why `source` does not parse as a script's body, or null when it does. */
export async function syntaxProblem(source: string): Promise<SyntaxProblem | null> {
  module ??= newQuickJSWASMModuleFromVariant(variant)
  const runtime = (await module).newRuntime()
  runtime.setMemoryLimit(PARSE_MEMORY_BYTES)
  const vm = runtime.newContext()
  try {
    const compiled = vm.evalCode(`(async () => {\n${source}\n})()`, 'script.js', { compileOnly: true })
    if (!compiled.error) {
      compiled.value.dispose()
      return null
    }
    const dumped = vm.dump(compiled.error) as { name?: string; message?: string; stack?: string } | null
    compiled.error.dispose()
    const at = /script\.js:(\d+):(\d+)/.exec(dumped?.stack ?? '')
    const lines = source.split('\n').length
    // a problem found at the wrapper's closing line is at the end of the script
    const line = Math.min(lines, Math.max(1, Number(at?.[1] ?? WRAPPER_LINES + 1) - WRAPPER_LINES))
    return {
      message: `${dumped?.name ?? 'SyntaxError'}: ${dumped?.message ?? 'the script does not parse'}`,
      line,
      column: Number(at?.[2] ?? 1),
    }
  } finally {
    vm.dispose()
    runtime.dispose()
  }
}
