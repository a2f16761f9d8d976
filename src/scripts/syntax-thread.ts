/**
 * The syntax thread: checks that a script parses (script-parse.ts) off the service's main thread,
 * one script at a time, for script-syntax.ts. A check that throws (a script nested past the
 * parser's stack) is answered as `failed`, and the thread is replaced after it.
 */
import { type SyntaxProblem, syntaxProblem } from './script-parse'

declare const self: Worker

export type ToSyntaxThread = { id: number; source: string }
export type FromSyntaxThread =
  | { id: number; t: 'checked'; problem: SyntaxProblem | null }
  | { id: number; t: 'failed'; error: string }

if (!Bun.isMainThread) {
  self.onmessage = async (e: MessageEvent<ToSyntaxThread>) => {
    const { id, source } = e.data
    let answer: FromSyntaxThread
    try {
      answer = { id, t: 'checked', problem: await syntaxProblem(source) }
    } catch (err) {
      answer = { id, t: 'failed', error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }
    }
    self.postMessage(answer)
  }
}
