/**
 * The vocabulary of a connection's state machine (./machine.ts): its state, the events it takes and
 * the actions it returns. Data only: the adapter (./front.ts) owns the sockets.
 */
import type { Answer } from '../http/answer'
import type { FailStatus, RequestStart, RequestStream } from './request-stream'
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

/**
 * The request whose answer has not ended yet, answered in-process or by the app. One of four
 * shared, frozen values (`inFlight`): taking a request allocates nothing.
 */
export interface InFlight {
  readonly via: 'inline' | 'upstream'
  /** A HEAD request: its answer has no body. */
  readonly head: boolean
}

const IN_FLIGHT = [
  { via: 'inline', head: false },
  { via: 'inline', head: true },
  { via: 'upstream', head: false },
  { via: 'upstream', head: true },
].map((f) => Object.freeze(f as InFlight))

export const inFlight = (via: InFlight['via'], head: boolean): InFlight =>
  IN_FLIGHT[(via === 'upstream' ? 2 : 0) + (head ? 1 : 0)]!

/**
 * What the connection does, with the data valid only there. Only `http` and the phases reached
 * from it carry `inFlight`, which changes in place (once per request); a phase object is made
 * only when the phase changes (`http` once per connection, `tunnel` and `closed` are shared).
 */
export type Phase =
  /** Requests are read and answered, one at a time. */
  | { readonly is: 'http'; inFlight: InFlight | null }
  /** The first request asked for an upgrade and goes upstream; what the client sends since is `held`. */
  | { readonly is: 'upgrade-wait'; inFlight: InFlight | null; readonly held: Buffer[] }
  /** The app switched protocols: bytes pass both ways unread. */
  | { readonly is: 'tunnel'; readonly inFlight: null }
  /** The front serves the upgraded connection as a websocket itself (./front-socket.ts): client bytes are frames. */
  | { readonly is: 'websocket'; readonly inFlight: null }
  /** No more requests are read: `status` is answered once what came before it is (or the grace ends). */
  | { readonly is: 'failing'; readonly status: FailStatus | 408; inFlight: InFlight | null }
  /** Nothing more is answered. */
  | { readonly is: 'closed'; readonly inFlight: null }

export const TUNNEL: Phase = Object.freeze({ is: 'tunnel', inFlight: null })
export const WEBSOCKET: Phase = Object.freeze({ is: 'websocket', inFlight: null })
export const CLOSED: Phase = Object.freeze({ is: 'closed', inFlight: null })
export const httpPhase = (): Phase => ({ is: 'http', inFlight: null })

/**
 * The client's side. Its FIN (`ended`) and the front's decision to close it (`closing`: nothing
 * more is answered, it is closed once its queue is out) come in either order, so both pairs occur.
 * A `closing` client that had not ended is half-closed and lingers (front.ts keeps the timer and
 * the count: the machine decides nothing by it). `gone`: its socket closed.
 */
export type ClientSide = 'open' | 'ended' | 'closing' | 'ended-closing' | 'gone'

export const clientEnded = (c: ClientSide) => c === 'ended' || c === 'ended-closing'
export const clientClosing = (c: ClientSide) => c === 'closing' || c === 'ended-closing'

export interface ConnState {
  phase: Phase
  clientSide: ClientSide
  /** The connection to the app's Bun.serve; `ended`: it got our FIN, answers what it has, then closes. */
  upstream: 'none' | 'connecting' | 'open' | 'ended'
  /** The client's address, as the app is told it (X-Real-IP). */
  peer: string
  /** GATEWAY_INLINE: requests the front can take whole are answered in-process. */
  inline: boolean
  /** Websocket upgrades are decided in-process and the front serves the socket (with `inline`). */
  sockets: boolean
  stream: RequestStream
  responses: ResponseStream
  /** Request bytes not yet sent to the app: a new request waits until the last one's answer ended. */
  pending: Segment[]
  /** The client's socket took less than it was given: nothing more is answered until it drains. */
  backlogged: boolean
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
  /** The app admitted the upgrade and its 101 is queued: the connection is a websocket the front serves. */
  | { on: 'ws-open'; now: number }
  /** The front's websocket queued its close frame: nothing more is sent. */
  | { on: 'ws-close' }

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
  /**
   * Ask the app in-process whether it admits this upgrade (then `ws-open`, or its answer and
   * `answered`; `head` and `close` are the request's, for that answer).
   */
  | { do: 'ws-upgrade'; request: Request; head: boolean; close: boolean }
  /** Client bytes for the front's websocket. */
  | { do: 'ws-data'; data: Buffer }
