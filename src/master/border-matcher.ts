/**
 * Which border rule applies, decided on a thread of its own (./border-thread.ts) within MATCH_MS.
 * The patterns are regular expressions a master administrator writes, and one that backtracks
 * without end (`(a+)+$` against a long user agent) held the service's only thread for seconds.
 * Such patterns are refused when a rule is saved (./regex-safety.ts); the limit stays for what that
 * static check lets through and for rules stored before it. Past the limit the thread is ended, the
 * checks it held answer 422 naming the rules, and the next check starts a new thread.
 */
import { ApiError } from '../errors'
import type { BorderDecision, BorderQuery, BorderRule } from './border-match'
import type { FromBorderThread, ToBorderThread } from './border-thread'

const MATCH_MS = 250

interface Waiting {
  resolve(answer: FromBorderThread): void
  reject(err: Error): void
  timer: ReturnType<typeof setTimeout>
}

let thread: Worker | null = null
let lastId = 0
const waiting = new Map<number, Waiting>()

const tooSlow = () =>
  new ApiError(
    422,
    `the border rules' patterns took longer than ${MATCH_MS} ms to match: one backtracks without end (such as (a+)+$); correct it`,
    { field: 'rules' },
  )

/** Ends the thread; what it held fails with `err`. */
function end(err: Error): void {
  thread?.terminate()
  thread = null
  for (const w of waiting.values()) {
    clearTimeout(w.timer)
    w.reject(err)
  }
  waiting.clear()
}

function started(): Worker {
  if (thread) return thread
  // the compiled binary carries this file as an entrypoint at its root (scripts/build.ts)
  const worker = new Worker(new URL('./border-thread.ts', import.meta.url).href)
  worker.onmessage = (e: MessageEvent<FromBorderThread>) => {
    const w = waiting.get(e.data.id)
    if (!w) return
    waiting.delete(e.data.id)
    clearTimeout(w.timer)
    w.resolve(e.data)
  }
  worker.onerror = () => end(new Error('the border-rule thread failed'))
  worker.unref()
  thread = worker
  return worker
}

/** The rule that decides and the check that chose it (./border-match.ts `decide`), on the thread. */
export async function decideOffThread<R extends BorderRule>(
  rules: readonly R[],
  query: BorderQuery,
): Promise<BorderDecision<R>> {
  const worker = started()
  const id = ++lastId
  const answer = await new Promise<FromBorderThread>((resolve, reject) => {
    const timer = setTimeout(() => end(tooSlow()), MATCH_MS)
    waiting.set(id, { resolve, reject, timer })
    worker.postMessage({ id, rules, query } satisfies ToBorderThread)
  })
  const rule = answer.rule === null ? null : (rules.find((r) => r.id === answer.rule) ?? null)
  return { rule, check: rule ? answer.check : null }
}
