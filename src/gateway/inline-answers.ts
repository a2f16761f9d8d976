/**
 * The front's requests answered in-process (the machine, ./machine.ts, decides which and when with
 * `planInline`): the app answers, and the answer goes to the client, a large one (a file) as the
 * client takes it. Its end is reported back, and the machine goes on with what is queued.
 */
import type { Answer } from '../http/answer'
import type { Chunk } from './conn-state'
import type { Conn } from './connection'
import {
  ASTERISK,
  asteriskAnswer,
  INLINE_MAX_BODY,
  inlineAnswer,
  inlineHead,
  inlineRequest,
  NO_HOST,
  noHostAnswer,
  oddUpgradeAnswer,
  tooLargeAnswer,
} from './inline'
import type { RequestStart } from './request-stream'

/** What of the front the answers use. */
export interface FrontIo {
  toClient(c: Conn, data: Chunk): void
  /** The answer is out (`close`: the connection must end after it). */
  answered(c: Conn, close: boolean): void
}

export interface InlineAnswers {
  /** Answers a request in-process (or sends the front's own answer); reports its end to `answered`. */
  answer(c: Conn, request: Request | Answer, headRequest: boolean, close: boolean): void
  /** Requests being answered. */
  inFlight(): number
}

export function inlineAnswers(serve: (request: Request) => Promise<Answer>, io: FrontIo): InlineAnswers {
  let inFlight = 0
  /** The client's socket closed (also while an answer was awaited: a check after an `await`). */
  const gone = (c: Conn) => c.clientSide === 'gone'

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
    io.answered(c, close)
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
    answer: (c, request, headRequest, close) => void answer(c, request, headRequest, close),
    inFlight: () => inFlight,
  }
}

/**
 * How an upgrade request is taken when the front serves websockets (pure, like planInline): the
 * app's view of it, to decide in-process; the front's 400 when it has none (an odd target, Expect),
 * so no socket of the process is Bun.serve's; null when planInline answers it (no Host, `*`).
 */
export function planUpgrade(
  start: RequestStart,
  peer: string,
): { request: Request; close: boolean } | { refused: Answer } | null {
  const head = inlineHead(start.scanned, peer, true)
  if (head === NO_HOST || head === ASTERISK) return null
  if (!head) return { refused: oddUpgradeAnswer() }
  return { request: inlineRequest(head, null), close: head.close }
}

/** How a request at the head of a connection's queue is taken in-process: `drop` segments leave the queue. */
export interface InlinePlan {
  drop: number
  request: Request | Answer
  close: boolean
}

/**
 * Whether the request starting `pending` is answered in-process, and with what (pure: the machine,
 * ./machine.ts, decides with it). `incomplete`: it is, once the rest of its body came.
 */
export function planInline(
  pending: readonly { data: Buffer; start?: RequestStart }[],
  start: RequestStart,
  peer: string,
  appInline: boolean,
): InlinePlan | 'incomplete' | 'upstream' {
  const head = inlineHead(start.scanned, peer)
  if (head === NO_HOST || head === ASTERISK) {
    // answered whatever its body: the connection ends after the answer, and what follows is dropped
    const method = start.scanned.line.slice(0, start.scanned.line.indexOf(' '))
    return { drop: pending.length, request: head === NO_HOST ? noHostAnswer() : asteriskAnswer(method), close: true }
  }
  // its body is dropped as it comes (./request-stream.ts): the connection goes on after it
  if (start.refused !== undefined)
    return { drop: start.parts, request: tooLargeAnswer(start.refused), close: head?.close ?? false }
  if (!appInline || !head || start.bodyBytes < 0 || start.bodyBytes > INLINE_MAX_BODY) return 'upstream'
  let end = start.parts
  let have = 0
  while (have < start.bodyBytes && end < pending.length && !pending[end]!.start) have += pending[end++]!.data.length
  if (have < start.bodyBytes) return 'incomplete'
  const parts = pending.slice(start.parts, end).map((s) => s.data)
  const body = parts.length === 0 ? null : parts.length === 1 ? parts[0]! : Buffer.concat(parts)
  return { drop: end, request: inlineRequest(head, body), close: head.close }
}
