/**
 * The vocabulary of a connection's state machine (./machine.ts): its state, the events it takes and
 * the actions it returns. Data only: the adapter (./front.ts) owns the sockets.
 */
import type { Answer } from '../http/answer'
import type { RequestStart, RequestStream } from './request-stream'
import type { ResponseStream } from './response-stream'

/** Bytes for a socket: ASCII text (a byte a character) goes to it without a buffer of ours. */
export type Chunk = Buffer | string

/** How many bytes a queue holds. */
export const queued = (queue: readonly Chunk[]) => queue.reduce((n, chunk) => n + chunk.length, 0)

/** Request bytes for the app; `start` marks the first bytes of a request. */
export interface Segment {
  data: Buffer
  start?: RequestStart
}

export type Mode = 'http' | 'upgrade-wait' | 'tunnel' | 'failing' | 'closed'

export interface ConnState {
  mode: Mode
  /** The connection to the app's Bun.serve; `ended`: it got our FIN, answers what it has, then closes. */
  upstream: 'none' | 'connecting' | 'open' | 'ended'
  /** The client's address, as the app is told it (X-Real-IP). */
  peer: string
  /** GATEWAY_INLINE: requests the front can take whole are answered in-process. */
  inline: boolean
  stream: RequestStream
  responses: ResponseStream
  /** Request bytes not yet sent to the app: a new request waits until the last one's answer ended. */
  pending: Segment[]
  /** The request sent to the app (or answered in-process) whose answer has not ended yet. */
  awaiting: { head: boolean; inline?: true } | null
  /** Client bytes held while an upgrade request waits for the app's answer. */
  held: Buffer[]
  failStatus: number
  clientEnded: boolean
  /** Nothing more goes to the client but what is queued: it is closed once the queue is out. */
  finishing: boolean
  /** The client's socket took less than it was given: nothing more is answered until it drains. */
  backlogged: boolean
  /** Half-closed by the front, input dropped (front.ts keeps the timer and the count). */
  lingering?: unknown
  /** When the client last sent something or was last answered (the idle timeout). */
  lastActive: number
  /** When the client last took all that was queued for it (one that takes nothing is cut). */
  lastWrite: number
  /** The adapter's write queues, read only: how much waits for the client, whether the app took all. */
  readonly toClient: readonly Chunk[]
  readonly toUp: readonly Chunk[]
}

export type Event =
  | { on: 'client-data'; data: Buffer; now: number }
  | { on: 'client-end' }
  /** The client's queue was written as far as its socket took it. */
  | { on: 'client-written'; backlogged: boolean; waiter: boolean; now: number }
  | { on: 'client-closed' }
  | { on: 'up-open'; now: number }
  | { on: 'up-failed' }
  | { on: 'up-data'; data: Buffer; now: number }
  /** The app took all that was queued for it. */
  | { on: 'up-drained' }
  | { on: 'up-closed' }
  | { on: 'up-error' }
  /** An in-process answer is out; `close`: the connection ends after it. */
  | { on: 'answered'; close: boolean; now: number }
  | { on: 'fail-grace' }
  | { on: 'tick'; now: number; headMs: number; idleMs: number }

export type Action =
  | { do: 'to-client'; data: Chunk }
  | { do: 'to-up'; data: Buffer }
  | { do: 'serve'; request: Request | Answer; head: boolean; close: boolean }
  | { do: 'connect' }
  | { do: 'shutdown-up' }
  | { do: 'end-up' }
  | { do: 'pause-client' }
  /** Read the client again: `whenSent`, only if the app's queue is empty (its drain resumes it otherwise). */
  | { do: 'resume-client'; whenSent: boolean }
  | { do: 'pause-up' }
  | { do: 'resume-up' }
  /** Close the client once its queue is written: half-closed and lingering if it may still send. */
  | { do: 'close-client' }
  | { do: 'end-client' }
  | { do: 'terminate' }
  /** Send `fail-grace` after this long. */
  | { do: 'fail-timer'; ms: number }
