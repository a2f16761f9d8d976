/**
 * A websocket endpoint as the app serves it: its handlers, what a socket carries, the limits it is
 * given, and the part of Bun's ServerWebSocket an endpoint uses (`AppSocket`), which the gateway's
 * front also gives for the sockets it serves itself (src/gateway/front-socket.ts).
 */
import type { ServerWebSocket } from 'bun'

/**
 * What an endpoint sees of a socket: Bun.serve's ServerWebSocket on a listener of its own, or the
 * gateway's front serving it itself (src/gateway/front-socket.ts).
 */
export type AppSocket = Pick<
  ServerWebSocket<SocketData>,
  'data' | 'send' | 'close' | 'getBufferedAmount' | 'subscribe' | 'unsubscribe' | 'publish'
>

export interface SocketHandlers {
  /**
   * Decides the upgrade before it happens: what the socket carries (its caller), or the Response
   * that refuses it (a 401 error body). `clientAddress` is the peer as the HTTP kernel reads it.
   */
  upgrade(request: Request, clientAddress: string): Promise<unknown | Response>
  open?(ws: AppSocket): void
  message(ws: AppSocket, message: string | Buffer): void
  close?(ws: AppSocket, code: number, reason: string): void
}

export interface SocketData {
  path: string
  /** What the endpoint's `upgrade` attached. */
  attached: unknown
}

/** Limits Bun applies to every socket. */
export interface SocketLimits {
  idleTimeoutSec: number
  maxPayloadLength: number
  /** Bytes a socket may hold unsent before it is closed (Bun's default, 16 MiB, each: 150 slow readers took 3.6 GB). */
  backpressureLimit?: number
}

/** An upgrade the app admitted: the endpoint's handlers, what the socket carries, and the 101's own headers. */
export interface AdmittedSocket {
  handlers: SocketHandlers
  data: SocketData
  headers: Record<string, string>
  limits: SocketLimits
}
