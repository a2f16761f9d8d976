/**
 * A script's syntax, checked when it is stored (create or PATCH of a service script, a product
 * layer's script): a script that does not parse is a 400 naming `scriptdata`, with QuickJS's message
 * and the line and column in the script as written (script-parse.ts).
 *
 * The check runs on a thread of its own (syntax-thread.ts), started on first use, one script at a
 * time: compiling a 4 MB script on the main thread held every request of the service meanwhile. A
 * check has CHECK_MS; one that takes longer, or that the parser fails on, is refused as a script that
 * could not be checked, and the thread is replaced.
 */
import { badRequest } from '../errors'
import type { SyntaxProblem } from './script-parse'
import type { FromSyntaxThread, ToSyntaxThread } from './syntax-thread'

export type { SyntaxProblem } from './script-parse'

/** How long one check may take on the syntax thread. */
const CHECK_MS = 10_000

/** What a check found: the problem (null when the script parses), or why it could not be checked. */
export type Checked = { problem: SyntaxProblem | null } | { unchecked: string }

interface Job {
  id: number
  source: string
  done(c: Checked): void
}

/** The syntax thread, and the checks waiting for it. */
export class SyntaxChecker {
  private worker: Worker | undefined
  private readonly waiting: Job[] = []
  private current: { job: Job; timer: ReturnType<typeof setTimeout> } | undefined
  private ids = 0

  constructor(private readonly limitMs = CHECK_MS) {}

  check(source: string): Promise<Checked> {
    return new Promise((done) => {
      this.waiting.push({ id: ++this.ids, source, done })
      this.next()
    })
  }

  private next(): void {
    if (this.current) return
    const job = this.waiting.shift()
    if (!job) return
    const timer = setTimeout(
      () => this.end({ unchecked: `its check took longer than ${this.limitMs / 1000} s` }, true),
      this.limitMs,
    )
    this.current = { job, timer }
    this.thread().postMessage({ id: job.id, source: job.source } satisfies ToSyntaxThread)
  }

  /** Answers the current check; `replace` ends the thread (stuck or failed), a new one takes the next check. */
  private end(checked: Checked, replace: boolean): void {
    const current = this.current
    if (!current) return
    this.current = undefined
    clearTimeout(current.timer)
    if (replace) {
      this.worker?.terminate()
      this.worker = undefined
    }
    current.job.done(checked)
    this.next()
  }

  private thread(): Worker {
    if (this.worker) return this.worker
    // the compiled binary carries this file as an entrypoint at its root (scripts/build.ts)
    const worker = new Worker(new URL('./syntax-thread.ts', import.meta.url).href)
    const lost = () => {
      if (this.worker === worker) this.end({ unchecked: 'the syntax thread failed' }, true)
    }
    worker.onmessage = (e: MessageEvent<FromSyntaxThread>) => {
      const m = e.data
      if (this.worker !== worker || m.id !== this.current?.job.id) return
      if (m.t === 'checked') this.end({ problem: m.problem }, false)
      else this.end({ unchecked: `the parser failed on it (${m.error})` }, true)
    }
    worker.onerror = lost
    worker.addEventListener('close', lost)
    worker.unref()
    this.worker = worker
    return worker
  }

  /** Ends the thread (the service is stopping); checks still waiting are answered as unchecked. */
  stop(): void {
    this.end({ unchecked: 'the service is stopping' }, true)
    for (const job of this.waiting.splice(0)) job.done({ unchecked: 'the service is stopping' })
  }
}

const checker = new SyntaxChecker()

/** A 400 naming `scriptdata` when the script does not parse, with the parser's message, line and column. */
export async function requireParses(source: unknown): Promise<void> {
  if (typeof source !== 'string') return // the original's visual form is kept, not run
  const checked = await checker.check(source)
  if ('unchecked' in checked) throw badRequest(`the script could not be checked: ${checked.unchecked}`, 'scriptdata')
  const { problem } = checked
  if (problem)
    throw badRequest(`the script does not parse: ${problem.message} (line ${problem.line})`, 'scriptdata', {
      line: problem.line,
      column: problem.column,
    })
}
