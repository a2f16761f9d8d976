/**
 * One client connection of the front as a state machine: `step(state, event)` decides what the
 * connection does next and returns it as actions, in the order they must be performed. It does no
 * I/O and reads no clock (times come in the events); front.ts turns socket callbacks, timers and
 * in-process answers into events and performs the actions. The state is updated in place and
 * returned (a copy per event would show on the point read). RequestStream and ResponseStream are
 * part of the state: both are pure parsers.
 */
import { badGateway, failResponse } from './answers'
import {
  type Action,
  CLOSED,
  type ConnState,
  clientClosing,
  clientEnded,
  type Event,
  httpPhase,
  inFlight,
  queued,
  TUNNEL,
  WEBSOCKET,
} from './conn-state'
import { planInline, planUpgrade } from './inline-answers'
import type { FailStatus } from './request-stream'

/** What may wait for the turn's end on one connection before its next pipelined request is taken. */
export const PIPELINED_MAX = 64 * 1024

/** How long a failed connection waits for the app to answer what was already forwarded. */
export const FAIL_GRACE_MS = 2000

export function step(s: ConnState, e: Event): { state: ConnState; actions: Action[] } {
  const out: Action[] = []
  switch (e.on) {
    case 'client-data':
      s.lastActive = e.now
      fromClient(s, e.data, e.now, out)
      break
    case 'client-end':
      if (clientClosing(s.clientSide)) {
        // the front closes it anyway: it is ended once its queue is out (at once if it lingers)
        s.clientSide = 'ended-closing'
        out.push({ do: 'close-client' })
      } else if (s.clientSide === 'open') {
        s.clientSide = 'ended'
        if (s.phase.is === 'websocket') {
          // a client that ends its side without a close frame is gone
          s.phase = CLOSED
          finish(s, out)
        } else endUpstreamWhenDone(s, out) // requests still held (behind an answer or a pending upgrade) go to the app first
      }
      break
    case 'client-written':
      s.lastWrite = e.now // the client takes what it is sent, however slowly
      s.backlogged = e.backlogged
      if (s.backlogged) {
        out.push({ do: 'pause-up' })
        break
      }
      out.push({ do: 'resume-up' })
      // a large in-process answer waiting for the drain goes on instead
      if (!e.waiter && !clientClosing(s.clientSide) && (s.phase.is === 'http' || s.phase.is === 'failing'))
        pump(s, e.now, out)
      if (clientClosing(s.clientSide)) out.push({ do: 'close-client' }) // after what pump just queued
      break
    case 'client-closed':
      s.phase = CLOSED
      s.clientSide = 'gone'
      out.push({ do: 'end-up' })
      break
    case 'up-open':
      if (s.phase.is === 'closed') {
        s.upstream = 'none'
        out.push({ do: 'end-up' }) // the client left while it connected
        break
      }
      s.upstream = 'open'
      pump(s, e.now, out)
      endUpstreamWhenDone(s, out)
      break
    case 'up-failed':
      s.upstream = 'none'
      if (s.phase.is === 'closed') break // the client left meanwhile
      s.phase = CLOSED
      out.push({ do: 'to-client', data: badGateway() })
      finish(s, out)
      break
    case 'up-data':
      fromUpstream(s, e.data, e.now, out)
      break
    case 'up-drained':
      resumeClient(s, out)
      break
    case 'up-closed':
      if (s.phase.inFlight?.via === 'inline') {
        // nothing is awaited from the app: the in-process answer goes out, then the connection goes on or ends
        s.upstream = 'none'
        break
      }
      if (s.phase.is === 'failing') finishFail(s, out)
      else {
        s.phase = CLOSED
        finish(s, out)
      }
      break
    case 'up-error':
      finish(s, out)
      break
    case 'answered': {
      s.lastActive = e.now
      const p = s.phase
      if (p.is === 'closed' || p.is === 'tunnel' || p.is === 'websocket') break
      p.inFlight = null
      if (p.is === 'failing')
        pump(s, e.now, out) // what came before the failure is answered first
      else if (e.close) {
        s.phase = CLOSED
        finish(s, out)
      } else if (p.is === 'upgrade-wait')
        declined(s, p.held, e.now, out) // answered by the front (no Host)
      else pump(s, e.now, out)
      break
    }
    case 'fail-grace':
      // an in-process answer still in flight goes first: its end sends the failure
      if (s.phase.inFlight?.via !== 'inline') finishFail(s, out)
      break
    case 'tick':
      tick(s, e, out)
      break
    case 'ws-open': {
      const p = s.phase
      if (p.is !== 'upgrade-wait') break // the client left meanwhile
      if (s.clientSide !== 'open') {
        // it ended its side while the app decided: no socket was opened for it
        s.phase = CLOSED
        finish(s, out)
        break
      }
      s.phase = WEBSOCKET
      s.lastActive = e.now
      for (const data of p.held) out.push({ do: 'ws-data', data })
      out.push({ do: 'resume-client', whenSent: false })
      break
    }
    case 'ws-close':
      if (s.phase.is === 'websocket') s.phase = CLOSED
      finish(s, out)
      break
  }
  return { state: s, actions: out }
}

const upstreamUsable = (s: ConnState) => s.upstream === 'open' || s.upstream === 'ended'

function fromClient(s: ConnState, data: Buffer, now: number, out: Action[]): void {
  const p = s.phase
  if (p.is === 'tunnel') return void out.push({ do: 'to-up', data })
  if (p.is === 'websocket') return void out.push({ do: 'ws-data', data })
  if (p.is === 'upgrade-wait') {
    p.held.push(data)
    return void out.push({ do: 'pause-client' })
  }
  if (p.is !== 'http') return
  const r = s.stream.push(data, now)
  let next = 0
  for (let i = 0; i < r.out.length; i++) {
    const start = r.starts[next]?.at === i ? r.starts[next++] : undefined
    s.pending.push(start ? { data: r.out[i]!, start } : { data: r.out[i]! })
  }
  if (r.fail) fail(s, r.fail, out)
  else if (r.held) s.phase = { is: 'upgrade-wait', inFlight: p.inFlight, held: r.held.length ? [r.held] : [] }
  pump(s, now, out)
}

function fromUpstream(s: ConnState, data: Buffer, now: number, out: Action[]): void {
  const p = s.phase
  if (p.is === 'closed') return
  if (p.is === 'tunnel') return void out.push({ do: 'to-client', data })
  if (p.is === 'websocket') return // no upstream carries a socket the front serves
  const seen = s.responses.observe(data, p.inFlight?.head ?? false)
  out.push({ do: 'to-client', data })
  if (seen.switched) {
    s.phase = TUNNEL
    if (p.is === 'upgrade-wait') for (const h of p.held) out.push({ do: 'to-up', data: h })
    resumeClient(s, out)
    endUpstreamWhenDone(s, out)
    return
  }
  if (seen.completed === 0) return
  p.inFlight = null
  s.lastActive = now
  if (p.is === 'upgrade-wait') declined(s, p.held, now, out)
  else pump(s, now, out)
}

/** The upgrade request was answered without switching protocols: what the client sent since is HTTP. */
function declined(s: ConnState, held: Buffer[], now: number, out: Action[]): void {
  s.phase = httpPhase()
  s.stream.upgradeDeclined()
  for (const h of held) fromClient(s, h, now, out)
  pump(s, now, out)
}

/** The client is read again once nothing it sent waits: no request held back, no backlog upstream. */
function resumeClient(s: ConnState, out: Action[]): void {
  if (s.pending.length === 0 && s.phase.is !== 'upgrade-wait') out.push({ do: 'resume-client', whenSent: true })
}

/**
 * Sends what may go to the app now: everything up to the next request while an answer is awaited.
 * A request the front can take whole is served in-process instead; one whose body is still
 * arriving is read on until it is.
 */
function pump(s: ConnState, now: number, out: Action[]): void {
  const batch: Buffer[] = []
  let collecting = false
  let answered = false
  const p = s.phase
  // requests are taken in the phases that read them (a failure answered at once left none)
  while (p.is !== 'closed' && p.is !== 'tunnel' && p.is !== 'websocket' && s.pending.length) {
    const seg = s.pending[0]!
    if (seg.start) {
      // the next request waits for the last answer, for a client that stopped taking answers, and
      // for the turn's end when much is queued for this one
      if (p.inFlight || s.backlogged || queued(s.toClient) > PIPELINED_MAX) break
      // an upgrade the front can serve itself is decided in-process, not relayed
      const upgrade = p.is === 'upgrade-wait' && s.sockets ? planUpgrade(seg.start, s.peer) : null
      if (upgrade) {
        const { head } = seg.start
        s.pending.splice(0, seg.start.parts)
        p.inFlight = inFlight('inline', head)
        out.push(
          'refused' in upgrade
            ? { do: 'serve', request: upgrade.refused, head, close: true }
            : { do: 'ws-upgrade', request: upgrade.request, head, close: upgrade.close },
        )
        answered = true
        continue
      }
      const plan = planInline(s.pending, seg.start, s.peer, s.inline)
      if (plan === 'incomplete') {
        // a body that can no longer come whole (the client ended): nothing more is answered
        if (clientEnded(s.clientSide)) {
          s.pending.length = 0
          finish(s, out)
          return
        }
        collecting = true
        break
      }
      if (plan !== 'upstream') {
        s.pending.splice(0, plan.drop)
        p.inFlight = inFlight('inline', seg.start.head)
        out.push({ do: 'serve', request: plan.request, head: seg.start.head, close: plan.close })
        answered = true
        continue
      }
      if (!upstreamUsable(s)) {
        connect(s, out)
        break
      }
      p.inFlight = inFlight('upstream', seg.start.head)
    } else if (!upstreamUsable(s)) break // the body of a request whose upstream is connecting
    batch.push(seg.data)
    s.pending.shift()
  }
  if (batch.length) out.push({ do: 'to-up', data: batch.length === 1 ? batch[0]! : Buffer.concat(batch) })
  // a head that began behind held requests had no way to go on: its time starts now
  if ((batch.length || answered) && s.stream.waitingForHead) s.stream.partialSince = now
  if (collecting) out.push({ do: 'resume-client', whenSent: false })
  else if (s.pending.length) out.push({ do: 'pause-client' })
  else {
    resumeClient(s, out)
    endUpstreamWhenDone(s, out)
  }
}

function connect(s: ConnState, out: Action[]): void {
  if (s.upstream !== 'none') return
  s.upstream = 'connecting'
  out.push({ do: 'connect' })
}

/** A client that ended (or failed) has its FIN passed on once all it sent went to the app. */
function endUpstreamWhenDone(s: ConnState, out: Action[]): void {
  const p = s.phase
  // an in-process answer in flight comes first: its end calls this again
  if (s.upstream === 'ended' || s.pending.length || p.is === 'upgrade-wait' || p.inFlight?.via === 'inline') return
  if (!clientEnded(s.clientSide) && p.is !== 'failing') return
  if (!upstreamUsable(s)) {
    // nothing is upstream: once the last answer is out, the failure goes out, or the ended client is closed
    if (s.upstream === 'connecting' || p.inFlight) return
    if (p.is === 'failing') finishFail(s, out)
    else if (p.is === 'http') finish(s, out)
    return
  }
  s.upstream = 'ended'
  out.push({ do: 'shutdown-up' }) // the app answers what it has, then closes
}

/** Requests are read only in `http`: only there can a request fail. */
function fail(s: ConnState, status: FailStatus | 408, out: Action[]): void {
  const p = s.phase
  if (p.is !== 'http') return
  s.phase = { is: 'failing', status, inFlight: p.inFlight }
  // nothing is being answered: the failure goes out at once
  if (s.upstream === 'none' && !p.inFlight && !s.pending.length) {
    finishFail(s, out)
    return
  }
  endUpstreamWhenDone(s, out)
  out.push({ do: 'fail-timer', ms: FAIL_GRACE_MS })
}

function finishFail(s: ConnState, out: Action[]): void {
  const p = s.phase
  if (p.is !== 'failing') return // the grace ended after the failure went out
  s.phase = CLOSED
  out.push({ do: 'to-client', data: failResponse(p.status) }, { do: 'end-up' })
  finish(s, out)
}

/** Nothing more is answered: the client is closed once its queue is out (not again, nor once gone). */
function finish(s: ConnState, out: Action[]): void {
  if (s.clientSide === 'open') s.clientSide = 'closing'
  else if (s.clientSide === 'ended') s.clientSide = 'ended-closing'
  else return
  out.push({ do: 'close-client' })
}

/**
 * The front's clocks, looked at a few times a second: a head not complete in time is answered 408.
 * No app closes a connection for us: one left idle, or whose body stalled, ends after the idle
 * timeout; one that takes nothing of what it is sent is cut after three times that.
 */
function tick(s: ConnState, e: { now: number; headMs: number; idleMs: number }, out: Action[]): void {
  const { now, idleMs } = e
  const { stream } = s
  if (s.phase.is === 'http' && stream.waitingForHead && s.pending.length === 0 && now - stream.partialSince > e.headMs)
    fail(s, 408, out)
  if (s.toClient.length) {
    if (now - s.lastWrite > 3 * idleMs) out.push({ do: 'terminate' })
    return
  }
  if (s.phase.is !== 'http' || s.upstream === 'connecting' || now - s.lastActive <= idleMs) return
  const answering = s.phase.inFlight !== null
  const idleBetweenRequests = !answering && !s.pending.length && !stream.waitingForHead
  const bodyStalled = stream.inBody || (s.pending.length > 0 && !answering)
  if (idleBetweenRequests || bodyStalled) out.push({ do: 'end-client' })
}
