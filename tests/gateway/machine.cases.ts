// The table the connection machine's test replays: a starting state, events, and the actions and
// state they must give. One row per edge of the README's state diagram and per invariant (one
// request in flight, the client's FIN after all it sent, a failure after the earlier answers).
import { CLOSED, type ConnState, type Event, type InFlight, inFlight, type Phase, TUNNEL } from '~/gateway/conn-state'

export const IP = 'X-Real-IP: 203.0.113.7\r\n'
const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`
/** What the front forwards for `get(path)`. */
const sent = (path: string) => `to-up GET ${path} HTTP/1.1\r\nHost: x\r\n${IP}\r\n`
const ok = (body = 'ok') => `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`
const upgrade = 'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'
/** What is in flight: a GET answered in-process, or sent to the app. */
const INLINE = inFlight('inline', false)
const UP = inFlight('upstream', false)
const http = (f: InFlight | null = null): Phase => ({ is: 'http', inFlight: f })
const failing = (f: InFlight | null): Phase => ({ is: 'failing', status: 400, inFlight: f })

/** Events as the table writes them: bytes as latin1 text, times from a clock starting at 1000. */
export type Ev =
  | { on: 'client-data' | 'up-data'; text: string }
  | { on: 'tick'; now: number }
  | { on: 'client-written'; backlogged: boolean }
  | { on: 'answered'; close: boolean }
  | { on: 'up-open' }
  | { on: 'ws-open'; now: number }
  | Exclude<Event, { now: number }>

export interface MachineCase {
  name: string
  /** Fields of the starting state (the rest: a fresh, open HTTP connection, answering in-process). */
  from?: Partial<ConnState>
  events: Ev[]
  /** The actions of all the events, in order, rendered by `render` in the test. */
  actions: string[]
  /** Fields of the state after the events. */
  state?: Partial<ConnState>
}

const idle = { pending: [] }
const closing = ['to-client HTTP/1.1 400 Bad Request', 'end-up', 'close-client']

export const cases: MachineCase[] = [
  // http, in-process
  {
    name: 'a request the front takes whole is served in-process; the client is read on',
    from: { lastActive: 0 },
    events: [{ on: 'client-data', text: get('/a') }],
    actions: ['serve GET /a', 'resume-client when sent'],
    state: { phase: http(INLINE), upstream: 'none', lastActive: 1000 },
  },
  {
    name: 'one request in flight: a pipelined one waits, the client is paused',
    events: [{ on: 'client-data', text: get('/a') + get('/b') }],
    actions: ['serve GET /a', 'pause-client'],
    state: { phase: http(INLINE) },
  },
  {
    name: "the next request is taken once the last answer is out, in the client's order",
    events: [
      { on: 'client-data', text: get('/a') + get('/b') },
      { on: 'answered', close: false },
    ],
    actions: ['serve GET /a', 'pause-client', 'serve GET /b', 'resume-client when sent'],
  },
  {
    name: 'an answer that ends the connection: closed once its queue is written',
    events: [
      { on: 'client-data', text: get('/a') + get('/b') },
      { on: 'answered', close: true },
    ],
    actions: ['serve GET /a', 'pause-client', 'close-client'],
    state: { phase: CLOSED, clientSide: 'closing' },
  },
  {
    name: 'a body not whole yet is read on before the request is served',
    events: [
      { on: 'client-data', text: 'POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab' },
      { on: 'client-data', text: 'cd' },
    ],
    actions: ['resume-client', 'serve POST /p', 'resume-client when sent'],
  },
  {
    name: 'a body that can no longer come whole (the client ended): nothing is answered, the client is closed',
    events: [
      { on: 'client-data', text: 'POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab' },
      { on: 'client-end' },
      { on: 'client-written', backlogged: false },
    ],
    // the second ask is a no-op for the adapter (the client is already closing)
    actions: ['resume-client', 'resume-up', 'close-client', 'close-client'],
    state: { clientSide: 'ended-closing', pending: [] },
  },
  {
    name: "a request without Host gets the front's 400 and ends the connection; what follows is dropped",
    events: [{ on: 'client-data', text: `GET /a HTTP/1.1\r\n\r\n${get('/b')}` }],
    actions: ['serve 400 close', 'resume-client when sent'],
    state: { pending: [] },
  },
  // http, upstream
  {
    name: 'GATEWAY_INLINE=off: the first request connects the upstream; it waits meanwhile',
    from: { inline: false },
    events: [{ on: 'client-data', text: get('/a') }],
    actions: ['connect', 'pause-client'],
    state: { upstream: 'connecting', phase: http() },
  },
  {
    name: 'the upstream open: the waiting request goes to it',
    from: { inline: false },
    events: [{ on: 'client-data', text: get('/a') }, { on: 'up-open' }],
    actions: ['connect', 'pause-client', sent('/a'), 'resume-client when sent'],
    state: { upstream: 'open', phase: http(UP) },
  },
  {
    name: "the app's answer ended: it goes to the client, then the next request goes up",
    from: { inline: false, upstream: 'open' },
    events: [
      { on: 'client-data', text: get('/a') + get('/b') },
      { on: 'up-data', text: ok() },
    ],
    actions: [sent('/a'), 'pause-client', `to-client ${ok()}`, sent('/b'), 'resume-client when sent'],
  },
  {
    name: "an answer in pieces: the next request waits for the answer's end",
    from: { inline: false, upstream: 'open' },
    events: [
      { on: 'client-data', text: get('/a') + get('/b') },
      { on: 'up-data', text: ok().slice(0, -1) },
    ],
    actions: [sent('/a'), 'pause-client', `to-client ${ok().slice(0, -1)}`],
  },
  {
    name: 'the app could not be reached: 502, closed',
    from: { inline: false },
    events: [{ on: 'client-data', text: get('/a') }, { on: 'up-failed' }],
    actions: ['connect', 'pause-client', 'to-client HTTP/1.1 502 Bad Gateway', 'close-client'],
    state: { phase: CLOSED, upstream: 'none' },
  },
  {
    name: 'the app closed: the client is closed',
    from: { upstream: 'open' },
    events: [{ on: 'up-closed' }],
    actions: ['close-client'],
    state: { phase: CLOSED },
  },
  {
    name: 'the app closed while an in-process answer is in flight: only the upstream is gone',
    from: { upstream: 'open' },
    events: [{ on: 'client-data', text: get('/a') }, { on: 'up-closed' }],
    actions: ['serve GET /a', 'resume-client when sent'],
    state: { phase: http(INLINE), upstream: 'none' },
  },
  // upgrade-wait, tunnel
  {
    name: 'an upgrade goes up; what the client sends meanwhile is held and the client paused',
    from: { upstream: 'open' },
    events: [
      { on: 'client-data', text: upgrade },
      { on: 'client-data', text: 'later' },
    ],
    actions: [`to-up ${upgrade.slice(0, -2)}${IP}\r\n`, 'pause-client'],
    state: { phase: { is: 'upgrade-wait', inFlight: UP, held: [Buffer.from('later')] } },
  },
  {
    name: '101: a tunnel; the held bytes go up raw, the client is read again',
    from: { upstream: 'open' },
    events: [
      { on: 'client-data', text: upgrade },
      { on: 'client-data', text: 'later' },
      { on: 'up-data', text: 'HTTP/1.1 101 Switching Protocols\r\n\r\n' },
      { on: 'client-data', text: 'raw' },
      { on: 'up-data', text: 'back' },
    ],
    actions: [
      `to-up ${upgrade.slice(0, -2)}${IP}\r\n`,
      'pause-client',
      'to-client HTTP/1.1 101 Switching Protocols\r\n\r\n',
      'to-up later',
      'resume-client when sent',
      'to-up raw',
      'to-client back',
    ],
    state: { phase: TUNNEL },
  },
  {
    name: 'the upgrade answered without 101: back to HTTP, the held bytes parsed as requests',
    from: { upstream: 'open' },
    events: [
      { on: 'client-data', text: upgrade + get('/b') },
      { on: 'up-data', text: ok() },
    ],
    actions: [
      `to-up ${upgrade.slice(0, -2)}${IP}\r\n`,
      `to-client ${ok()}`,
      'serve GET /b',
      'resume-client when sent',
      'resume-client when sent',
    ],
    state: { phase: http(INLINE) },
  },
  {
    name: 'an upgrade request the front answers itself (no Host): closed after its answer, not left waiting',
    events: [
      { on: 'client-data', text: upgrade.replace('Host: x\r\n', '') },
      { on: 'client-data', text: 'later' },
      { on: 'answered', close: true },
    ],
    actions: ['serve 400 close', 'pause-client', 'close-client'],
    state: { phase: CLOSED, clientSide: 'closing' },
  },
  // failing
  {
    name: 'a malformed head with nothing in flight: 400 at once, closed',
    events: [{ on: 'client-data', text: 'GET / HTTP/1.1\r\nHost : x\r\n\r\n' }],
    actions: [...closing, 'resume-client when sent'], // reading on is harmless: the client is closing
    state: { phase: CLOSED, clientSide: 'closing' },
  },
  {
    name: 'a failure behind a request upstream: the FIN goes up, the 400 only after its answer',
    from: { inline: false, upstream: 'open' },
    events: [
      { on: 'client-data', text: `${get('/a')}GET / HTTP/1.1\r\nHost : x\r\n\r\n` },
      { on: 'up-data', text: ok() },
      { on: 'up-closed' },
    ],
    actions: [
      'fail-timer 2000',
      sent('/a'),
      'resume-client when sent',
      'shutdown-up',
      `to-client ${ok()}`,
      'resume-client when sent',
      ...closing,
    ],
    state: { phase: CLOSED },
  },
  {
    name: 'the grace ends: an in-process answer in flight still goes first',
    from: { phase: failing(INLINE) },
    events: [{ on: 'fail-grace' }],
    actions: [],
    state: { phase: failing(INLINE) },
  },
  {
    name: 'the grace ends with the app silent: the failure goes out',
    from: { phase: failing(UP), upstream: 'ended' },
    events: [{ on: 'fail-grace' }],
    actions: closing,
    state: { phase: CLOSED },
  },
  {
    name: 'a failure behind an in-process answer: the failure goes out once that answer is',
    events: [
      { on: 'client-data', text: `${get('/a')}GET / HTTP/1.1\r\nHost : x\r\n\r\n` },
      { on: 'answered', close: false },
    ],
    actions: ['fail-timer 2000', 'serve GET /a', 'resume-client when sent', 'resume-client when sent', ...closing],
    state: { phase: CLOSED },
  },
  {
    name: 'an error on the upstream: the client is closed once its queue is out',
    from: { upstream: 'open' },
    events: [{ on: 'up-error' }],
    actions: ['close-client'],
    state: { clientSide: 'closing' },
  },
  // the client's end and writes
  {
    name: "the client's FIN goes up only after all it sent did",
    from: { inline: false, upstream: 'open' },
    events: [
      { on: 'client-data', text: get('/a') + get('/b') },
      { on: 'client-end' },
      { on: 'up-data', text: ok() },
      { on: 'up-data', text: ok() },
    ],
    actions: [
      sent('/a'),
      'pause-client',
      `to-client ${ok()}`,
      sent('/b'),
      'resume-client when sent',
      'shutdown-up',
      `to-client ${ok()}`,
      'resume-client when sent',
    ],
    state: { upstream: 'ended', clientSide: 'ended' },
  },
  {
    name: 'the client ended with nothing in flight and no upstream: closed',
    from: idle,
    events: [{ on: 'client-end' }],
    actions: ['close-client'],
    state: { clientSide: 'ended-closing' },
  },
  {
    // front.ts ends an ended client it closes, at once if it lingers, else once its queue is out
    name: 'the client ended while the front closes it: only its close is asked for again',
    from: { phase: CLOSED, clientSide: 'closing', upstream: 'open' },
    events: [{ on: 'client-end' }],
    actions: ['close-client'],
    state: { clientSide: 'ended-closing' },
  },
  {
    name: 'a client that takes less than it is given: the app is paused, no next request is taken',
    from: { inline: false, upstream: 'open' },
    events: [
      { on: 'client-data', text: get('/a') + get('/b') },
      { on: 'client-written', backlogged: true },
      { on: 'up-data', text: ok() },
      { on: 'client-written', backlogged: false },
    ],
    actions: [
      sent('/a'),
      'pause-client',
      'pause-up',
      `to-client ${ok()}`,
      'pause-client',
      'resume-up',
      sent('/b'),
      'resume-client when sent',
    ],
  },
  {
    name: "more than 64 KiB queued for the client: the next request waits for the turn's end",
    from: { toClient: ['x'.repeat(64 * 1024 + 1)] },
    events: [{ on: 'client-data', text: get('/a') }],
    actions: ['pause-client'],
  },
  {
    name: 'the app took what was queued for it: the client is read again',
    from: idle,
    events: [{ on: 'up-drained' }],
    actions: ['resume-client when sent'],
  },
  {
    name: 'the client closed: the upstream is ended',
    events: [{ on: 'client-closed' }],
    actions: ['end-up'],
    state: { phase: CLOSED, clientSide: 'gone' },
  },
  {
    name: "the client gone: the app's close that follows asks nothing of it",
    from: { upstream: 'open' },
    events: [{ on: 'client-closed' }, { on: 'up-closed' }, { on: 'client-end' }],
    actions: ['end-up'],
    state: { phase: CLOSED, clientSide: 'gone' },
  },
  // timeouts (the clock starts at 1000; head and idle limits 100)
  {
    name: 'a head not complete in time: 408',
    events: [
      { on: 'client-data', text: 'GET / HTTP/1.1\r\n' },
      { on: 'tick', now: 1101 },
    ],
    actions: ['resume-client when sent', 'to-client HTTP/1.1 408 Request Timeout', 'end-up', 'close-client'],
    state: { phase: CLOSED, clientSide: 'closing' },
  },
  {
    name: 'a head still in time: nothing',
    events: [
      { on: 'client-data', text: 'GET / HTTP/1.1\r\n' },
      { on: 'tick', now: 1100 },
    ],
    actions: ['resume-client when sent'],
  },
  {
    name: 'idle between requests past the idle timeout: ended',
    from: { lastActive: 1000 },
    events: [{ on: 'tick', now: 1101 }],
    actions: ['end-client'],
  },
  {
    name: 'an answer awaited is not idleness',
    from: { lastActive: 1000, upstream: 'open', phase: http(UP) },
    events: [{ on: 'tick', now: 5000 }],
    actions: [],
  },
  {
    name: 'a body stalled past the idle timeout: ended',
    events: [
      { on: 'client-data', text: 'POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab' },
      { on: 'tick', now: 1101 },
    ],
    actions: ['resume-client', 'end-client'],
  },
  {
    name: 'an upstream being connected is not idleness',
    from: { lastActive: 1000, upstream: 'connecting' },
    events: [{ on: 'tick', now: 5000 }],
    actions: [],
  },
  {
    name: 'a client that takes nothing of its queue for three idle timeouts: cut',
    from: { lastWrite: 1000, toClient: ['answer'] },
    events: [{ on: 'tick', now: 1301 }],
    actions: ['terminate'],
  },
]
