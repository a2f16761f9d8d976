/**
 * The front's requests answered in-process, one connection's at a time: the request at the head of
 * its queue is taken once its body is whole, the app answers it, and the answer goes to the client,
 * a large one (a file) as the client takes it. The front then goes on with what is queued.
 */
import type { Answer } from '../http/hooks/answers'
import type { Chunk, Conn } from './connection'
import {
  ASTERISK,
  asteriskAnswer,
  INLINE_MAX_BODY,
  inlineAnswer,
  inlineRequest,
  inlineHead,
  NO_HOST,
  noHostAnswer,
  tooLargeAnswer,
} from './inline'
import type { RequestStart } from './request-stream'

/** What of the front the answers use. */
export interface FrontIo {
  toClient(c: Conn, data: Chunk): void
  /** Goes on with the connection's queued requests (or sends its failure, or ends it). */
  pump(c: Conn): void
  /** Closes the client once what is queued for it is written. */
  finishClient(c: Conn): void
}

export interface InlineAnswers {
  /** Takes the request at the head of `pending` when it is one to answer in-process and its body is whole. */
  take(c: Conn, start: RequestStart): 'taken' | 'incomplete' | 'upstream'
  /** Requests being answered. */
  inFlight(): number
}

/** `appInline` false: no request goes to `serve`; the front's own answers (no Host, `*`, a refused body) stay. */
export function inlineAnswers(
  serve: (request: Request) => Promise<Answer>,
  io: FrontIo,
  appInline: boolean,
): InlineAnswers {
  let inFlight = 0
  /** The connection ended (also while an answer was awaited: a check after an `await`). */
  const gone = (c: Conn) => c.mode === 'closed'

  /** Sends the app's answer to the request (or the front's own answer) and goes on with the connection. */
  const answer = async (c: Conn, request: Request | Answer, headRequest: boolean, close: boolean) => {
    inFlight++
    try {
      const bytes = inlineAnswer('status' in request ? request : await serve(request), headRequest, close)
      const made = bytes instanceof Promise ? await bytes : bytes // a turn of the microtask queue saved
      close = made.close
      if (gone(c)) return
      io.toClient(c, made.bytes)
      if (made.rest) close = (await sendRest(c, made.rest)) || close
    } catch {
      // the answer could not be made (a file gone while it was read): the client sees the connection end
      if (!gone(c)) close = true
    } finally {
      inFlight--
    }
    c.awaiting = null
    c.lastActive = Date.now()
    if (c.mode === 'failing') return io.pump(c) // what came before the failure is answered first
    if (c.mode !== 'http') return
    if (close) {
      c.mode = 'closed'
      return io.finishClient(c)
    }
    io.pump(c)
  }

  /**
   * A large body (a file), read once from its start as the client takes it. True when it ended
   * short of its length (a file replaced meanwhile): the framing is broken, the connection must close.
   */
  const sendRest = async (c: Conn, rest: Blob): Promise<boolean> => {
    const reader = rest.stream().getReader()
    let sent = 0
    try {
      for (;;) {
        if (c.toClient.length) await new Promise<void>((resolve) => (c.onDrained = resolve))
        if (gone(c)) return true
        const { done, value } = await reader.read()
        if (done || sent + value.byteLength > rest.size) break
        sent += value.byteLength
        io.toClient(c, Buffer.from(value.buffer, value.byteOffset, value.byteLength))
      }
    } finally {
      void reader.cancel().catch(() => {})
    }
    return sent !== rest.size
  }

  return {
    take(c, start) {
      const head = inlineHead(start.scanned, c.peer)
      if (head === NO_HOST || head === ASTERISK) {
        // answered whatever its body: the connection ends after the answer, and what follows is dropped
        c.pending.length = 0
        c.awaiting = { head: start.head, inline: true }
        const method = start.scanned.line.slice(0, start.scanned.line.indexOf(' '))
        void answer(c, head === NO_HOST ? noHostAnswer() : asteriskAnswer(method), start.head, true)
        return 'taken'
      }
      if (start.refused !== undefined) {
        // its body is dropped as it comes (./request-stream.ts): the connection goes on after it
        c.pending.splice(0, start.parts)
        c.awaiting = { head: start.head, inline: true }
        void answer(c, tooLargeAnswer(start.refused), start.head, head?.close ?? false)
        return 'taken'
      }
      if (!appInline || !head || start.bodyBytes < 0 || start.bodyBytes > INLINE_MAX_BODY) return 'upstream'
      let end = start.parts
      let have = 0
      while (have < start.bodyBytes && end < c.pending.length && !c.pending[end]!.start)
        have += c.pending[end++]!.data.length
      if (have < start.bodyBytes) return 'incomplete'
      const parts = c.pending.slice(start.parts, end).map((s) => s.data)
      const body = parts.length === 0 ? null : parts.length === 1 ? parts[0]! : Buffer.concat(parts)
      c.pending.splice(0, end)
      c.awaiting = { head: start.head, inline: true }
      void answer(c, inlineRequest(head, body), start.head, head.close)
      return 'taken'
    },
    inFlight: () => inFlight,
  }
}
