/**
 * One client connection of the front as a state machine: `step(state, event)` decides what the
 * connection does next and returns it as actions, in the order they must be performed. It does no
 * I/O and reads no clock (times come in the events); front.ts turns socket callbacks, timers and
 * in-process answers into events and performs the actions. The state is updated in place and
 * returned (a copy per event would show on the point read). RequestStream and ResponseStream are
 * part of the state: both are pure parsers.
 */
import { badGateway, failResponse } from './answers'
import { type Action, type ConnState, type Event, queued } from './conn-state'
import { planInline } from './inline-answers'

/** What may wait for the turn's end on one connection before its next pipelined request is taken. */
export const PIPELINED_MAX = 64 * 1024

/** How long a failed connection waits for the app to answer what was already forwarded. */
export const FAIL_GRACE_MS = 2000

export function step(s: ConnState, e: Event): { state: ConnState; actions: Action[] } {
  const out: Action[] = []
  switch (e.on) {
    case 'client-data':
      fromClient(s, e.data, e.now, out)
      break
    case 'client-end':
      s.clientEnded = true
      if (s.lingering) out.push({ do: 'end-client' })
      // requests still held (behind an answer or a pending upgrade) go to the app first
      else endUpstreamWhenDone(s, out)
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
      if (!e.waiter && !s.finishing && (s.mode === 'http' || s.mode === 'failing')) pump(s, e.now, out)
      if (s.finishing) out.push({ do: 'close-client' }) // after what pump just queued
      break
    case 'client-closed':
      s.mode = 'closed'
      out.push({ do: 'end-up' })
      break
    case 'up-open':
      if (s.mode === 'closed') {
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
      if (s.mode === 'closed') break // the client left meanwhile
      s.mode = 'closed'
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
      if (s.awaiting?.inline) {
        // nothing is awaited from the app: the in-process answer goes out, then the connection goes on or ends
        s.upstream = 'none'
        break
      }
      if (s.mode === 'failing') finishFail(s, out)
      else {
        s.mode = 'closed'
        finish(s, out)
      }
      break
    case 'up-error':
      finish(s, out)
      break
    case 'answered':
      s.awaiting = null
      s.lastActive = e.now
      if (s.mode === 'failing')
        pump(s, e.now, out) // what came before the failure is answered first
      else if (s.mode === 'http' && e.close) {
        s.mode = 'closed'
        finish(s, out)
      } else if (s.mode === 'http') pump(s, e.now, out)
      break
    case 'fail-grace':
      // an in-process answer still in flight goes first: its end sends the failure
      if (!s.awaiting?.inline) finishFail(s, out)
      break
    case 'tick':
      tick(s, e, out)
      break
  }
  return { state: s, actions: out }
}

const upstreamUsable = (s: ConnState) => s.upstream === 'open' || s.upstream === 'ended'

function fromClient(s: ConnState, data: Buffer, now: number, out: Action[]): void {
  if (s.mode === 'tunnel') return void out.push({ do: 'to-up', data })
  if (s.mode === 'upgrade-wait') {
    s.held.push(data)
    return void out.push({ do: 'pause-client' })
  }
  if (s.mode !== 'http') return
  const r = s.stream.push(data, now)
  let next = 0
  for (let i = 0; i < r.out.length; i++) {
    const start = r.starts[next]?.at === i ? r.starts[next++] : undefined
    s.pending.push(start ? { data: r.out[i]!, start } : { data: r.out[i]! })
  }
  if (r.fail) fail(s, r.fail, out)
  else if (r.held) {
    s.mode = 'upgrade-wait'
    if (r.held.length) s.held.push(r.held)
  }
  pump(s, now, out)
}

function fromUpstream(s: ConnState, data: Buffer, now: number, out: Action[]): void {
  if (s.mode === 'closed') return
  if (s.mode === 'tunnel') return void out.push({ do: 'to-client', data })
  const seen = s.responses.observe(data, s.awaiting?.head ?? false)
  out.push({ do: 'to-client', data })
  if (seen.switched) {
    s.mode = 'tunnel'
    s.awaiting = null
    for (const h of s.held.splice(0)) out.push({ do: 'to-up', data: h })
    resumeClient(s, out)
    endUpstreamWhenDone(s, out)
    return
  }
  if (seen.completed === 0) return
  s.awaiting = null
  s.lastActive = now
  if (s.mode === 'upgrade-wait') {
    // the app answered the upgrade request without switching: what the client sent since is HTTP
    s.mode = 'http'
    s.stream.upgradeDeclined()
    for (const h of s.held.splice(0)) fromClient(s, h, now, out)
  }
  pump(s, now, out)
}

/** The client is read again once nothing it sent waits: no request held back, no backlog upstream. */
function resumeClient(s: ConnState, out: Action[]): void {
  if (s.pending.length === 0 && s.mode !== 'upgrade-wait') out.push({ do: 'resume-client', whenSent: true })
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
  while (s.pending.length) {
    const seg = s.pending[0]!
    if (seg.start) {
      // the next request waits for the last answer, for a client that stopped taking answers, and
      // for the turn's end when much is queued for this one
      if (s.awaiting || s.backlogged || queued(s.toClient) > PIPELINED_MAX) break
      const plan = planInline(s.pending, seg.start, s.peer, s.inline)
      if (plan === 'incomplete') {
        // a body that can no longer come whole (the client ended): nothing more is answered
        if (s.clientEnded) {
          s.pending.length = 0
          finish(s, out)
          return
        }
        collecting = true
        break
      }
      if (plan !== 'upstream') {
        s.pending.splice(0, plan.drop)
        s.awaiting = { head: seg.start.head, inline: true }
        out.push({ do: 'serve', request: plan.request, head: seg.start.head, close: plan.close })
        answered = true
        continue
      }
      if (!upstreamUsable(s)) {
        connect(s, out)
        break
      }
      s.awaiting = seg.start
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
  // an in-process answer in flight comes first: its end calls this again
  if (s.upstream === 'ended' || s.pending.length || s.mode === 'upgrade-wait' || s.awaiting?.inline) return
  if (!s.clientEnded && s.mode !== 'failing') return
  if (!upstreamUsable(s)) {
    // nothing is upstream: once the last answer is out, the failure goes out, or the ended client is closed
    if (s.upstream === 'connecting' || s.awaiting) return
    if (s.mode === 'failing') finishFail(s, out)
    else if (s.mode === 'http') finish(s, out)
    return
  }
  s.upstream = 'ended'
  out.push({ do: 'shutdown-up' }) // the app answers what it has, then closes
}

function fail(s: ConnState, status: number, out: Action[]): void {
  if (s.mode === 'failing' || s.mode === 'closed') return
  s.mode = 'failing'
  s.failStatus = status
  // nothing is being answered: the failure goes out at once
  if (s.upstream === 'none' && !s.awaiting && !s.pending.length) {
    finishFail(s, out)
    return
  }
  endUpstreamWhenDone(s, out)
  out.push({ do: 'fail-timer', ms: FAIL_GRACE_MS })
}

function finishFail(s: ConnState, out: Action[]): void {
  if (s.mode === 'closed') return
  s.mode = 'closed'
  out.push({ do: 'to-client', data: failResponse(s.failStatus) }, { do: 'end-up' })
  finish(s, out)
}

function finish(s: ConnState, out: Action[]): void {
  if (s.finishing) return
  s.finishing = true
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
  if (s.mode === 'http' && stream.waitingForHead && s.pending.length === 0 && now - stream.partialSince > e.headMs)
    fail(s, 408, out)
  if (s.toClient.length) {
    if (now - s.lastWrite > 3 * idleMs) out.push({ do: 'terminate' })
    return
  }
  if (s.mode !== 'http' || s.upstream === 'connecting' || now - s.lastActive <= idleMs) return
  const idleBetweenRequests = !s.awaiting && !s.pending.length && !stream.waitingForHead
  const bodyStalled = stream.inBody || (s.pending.length > 0 && !s.awaiting)
  if (idleBetweenRequests || bodyStalled) out.push({ do: 'end-client' })
}
