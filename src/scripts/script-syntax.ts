/**
 * A script's syntax, checked when it is stored (create or PATCH of a service script) by the parser
 * that will run it: QuickJS compiles the source as the sandbox wraps it (sandbox.ts: the body of an
 * async function) without running it. A script that does not parse is a 400 naming `scriptdata`,
 * with QuickJS's message and the line and column in the script as written.
 *
 * The QuickJS module is made on first use in this thread (about 20 MB once); each check takes a
 * context of its own, with a memory limit, and frees it.
 */
import variant from '@jitl/quickjs-singlefile-mjs-release-sync'
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core'
import { badRequest } from '../errors'

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

/** A 400 naming `scriptdata` when the script does not parse, with the parser's message, line and column. */
export async function requireParses(source: unknown): Promise<void> {
  if (typeof source !== 'string') return // the original's visual form is kept, not run
  const problem = await syntaxProblem(source)
  if (problem)
    throw badRequest(`the script does not parse: ${problem.message} (line ${problem.line})`, 'scriptdata', {
      line: problem.line,
      column: problem.column,
    })
}
