// The connection machine (src/gateway/machine.ts), driven by a table: each row a starting state,
// events, and the actions and state they must give. No socket: the machine does no I/O.
import { describe, expect, test } from 'bun:test'
import { type Action, type ConnState, type Event, httpPhase } from '~/gateway/conn-state'
import { step } from '~/gateway/machine'
import { RequestStream } from '~/gateway/request-stream'
import { ResponseStream } from '~/gateway/response-stream'
import { cases, type Ev, IP } from './machine.cases'
import { websocketCases } from './machine-websocket.cases'

const LIMIT_MS = 100

const fresh = (over: Partial<ConnState> = {}): ConnState => ({
  phase: httpPhase(),
  clientSide: 'open',
  upstream: 'none',
  peer: '203.0.113.7',
  inline: true,
  sockets: false,
  stream: new RequestStream(Buffer.from(IP), 1024),
  responses: new ResponseStream(),
  pending: [],
  backlogged: false,
  lastActive: 1000,
  lastWrite: 1000,
  toClient: [],
  toUp: [],
  ...over,
  // a row's phase is changed in place: each test gets its own
  ...(over.phase && { phase: { ...over.phase } }),
})

const text = (data: Buffer | string) => (typeof data === 'string' ? data : data.toString('latin1'))
/** Answers show their status line only (request ids and bodies vary); upstream bytes show whole. */
const firstLine = (data: Buffer | string) => {
  const t = text(data)
  return t.startsWith('HTTP/1.1 4') || t.startsWith('HTTP/1.1 5') ? t.slice(0, t.indexOf('\r\n')) : t
}

function render(a: Action): string {
  switch (a.do) {
    case 'to-client':
      return `to-client ${firstLine(a.data)}`
    case 'to-up':
      return `to-up ${text(a.data)}`
    case 'serve': {
      const r = a.request
      const what = 'status' in r ? `${r.status}` : `${r.method} ${new URL(r.url).pathname}`
      return `serve ${what}${a.close ? ' close' : ''}`
    }
    case 'resume-client':
      return a.whenSent ? 'resume-client when sent' : 'resume-client'
    case 'fail-timer':
      return `fail-timer ${a.ms}`
    case 'ws-upgrade':
      return `ws-upgrade ${a.request.method} ${new URL(a.request.url).pathname}${a.close ? ' close' : ''}`
    case 'ws-data':
      return `ws-data ${text(a.data)}`
    default:
      return a.do
  }
}

function event(e: Ev): Event {
  const now = 1000
  switch (e.on) {
    case 'client-data':
    case 'up-data':
      return { on: e.on, data: Buffer.from(e.text, 'latin1'), now }
    case 'tick':
      return { on: 'tick', now: e.now, headMs: LIMIT_MS, idleMs: LIMIT_MS }
    case 'client-written':
      return { on: 'client-written', backlogged: e.backlogged, waiter: false, now }
    case 'answered':
      return { on: 'answered', close: e.close, now }
    case 'up-open':
      return { on: 'up-open', now }
    default:
      return e
  }
}

describe('connection machine', () => {
  for (const c of [...cases, ...websocketCases]) {
    test(c.name, () => {
      let state = fresh(c.from)
      const actions: string[] = []
      for (const e of c.events) {
        const r = step(state, event(e))
        state = r.state
        actions.push(...r.actions.map(render))
      }
      expect(actions).toEqual(c.actions)
      if (c.state) expect(state).toMatchObject(c.state as Record<string, unknown>)
    })
  }

  test('an event changes nothing but the state it is given (no clock, no I/O)', () => {
    const a = fresh()
    const b = fresh()
    const e = event({ on: 'client-data', text: 'GET /a HTTP/1.1\r\nHost: x\r\n\r\n' })
    expect(step(a, e).actions.map(render)).toEqual(step(b, e).actions.map(render))
    expect(a.phase).toEqual(b.phase)
  })

  test('requests taken one after another change the phase in place and share their in-flight values', () => {
    const a = fresh()
    const b = fresh()
    const phase = a.phase
    const e = event({ on: 'client-data', text: 'GET /a HTTP/1.1\r\nHost: x\r\n\r\n' })
    step(a, e)
    step(b, e)
    expect(a.phase.inFlight).toBe(b.phase.inFlight) // one frozen value, not a record per request
    step(a, event({ on: 'answered', close: false }))
    step(a, e)
    expect(a.phase).toBe(phase)
  })
})
