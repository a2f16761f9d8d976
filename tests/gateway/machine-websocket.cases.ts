// Rows of the connection machine's table (./machine.cases.ts) for the websockets the front serves
// itself: the upgrade decided in-process, then a `websocket` phase whose client bytes are frames.
import { CLOSED, inFlight, WEBSOCKET } from '~/gateway/conn-state'
import type { MachineCase } from './machine.cases'

const upgrade = 'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'
const INLINE = inFlight('inline', false)

export const websocketCases: MachineCase[] = [
  {
    name: 'an upgrade the front serves is decided in-process; what the client sends meanwhile is held',
    from: { sockets: true },
    events: [
      { on: 'client-data', text: upgrade },
      { on: 'client-data', text: 'later' },
    ],
    actions: ['ws-upgrade GET /ws', 'pause-client'],
    state: { phase: { is: 'upgrade-wait', inFlight: INLINE, held: [Buffer.from('later')] }, upstream: 'none' },
  },
  {
    name: 'admitted: a websocket; the bytes held behind the request and all that follows are its frames',
    from: { sockets: true },
    events: [
      { on: 'client-data', text: `${upgrade}early` },
      { on: 'ws-open', now: 1000 },
      { on: 'client-data', text: 'next' },
    ],
    actions: ['ws-upgrade GET /ws', 'ws-data early', 'resume-client', 'ws-data next'],
    state: { phase: WEBSOCKET, upstream: 'none' },
  },
  {
    name: 'refused (its answer out): back to HTTP, the held bytes parsed as requests',
    from: { sockets: true },
    events: [
      { on: 'client-data', text: `${upgrade}GET /b HTTP/1.1\r\nHost: x\r\n\r\n` },
      { on: 'answered', close: false },
    ],
    // as after a relayed upgrade declined: declined's pump, then the answered event's own
    actions: ['ws-upgrade GET /ws', 'serve GET /b', 'resume-client when sent', 'resume-client when sent'],
    state: { phase: { is: 'http', inFlight: INLINE } },
  },
  {
    name: 'the socket closed by the front: nothing more is read, the client closed once its queue is out',
    from: { sockets: true },
    events: [
      { on: 'client-data', text: upgrade },
      { on: 'ws-open', now: 1000 },
      { on: 'ws-close' },
      { on: 'client-data', text: 'late' },
    ],
    actions: ['ws-upgrade GET /ws', 'resume-client', 'close-client'],
    state: { phase: CLOSED, clientSide: 'closing' },
  },
  {
    name: 'a client that ends its side of a websocket is closed',
    from: { sockets: true },
    events: [{ on: 'client-data', text: upgrade }, { on: 'ws-open', now: 1000 }, { on: 'client-end' }],
    actions: ['ws-upgrade GET /ws', 'resume-client', 'close-client'],
    state: { phase: CLOSED, clientSide: 'ended-closing' },
  },
  {
    name: 'an idle websocket is not ended by the HTTP idle timeout (its pings are the front socket’s)',
    from: { sockets: true },
    events: [
      { on: 'client-data', text: upgrade },
      { on: 'ws-open', now: 1000 },
      { on: 'tick', now: 1_000_000 },
    ],
    actions: ['ws-upgrade GET /ws', 'resume-client'],
    state: { phase: WEBSOCKET, clientSide: 'open' },
  },
  {
    name: 'an upgrade the front cannot view as the app would (absolute-form) is its own 400, then closed',
    from: { sockets: true },
    events: [
      { on: 'client-data', text: upgrade.replace('GET /ws', 'GET http://x/ws') },
      { on: 'answered', close: true },
    ],
    actions: ['serve 400 close', 'close-client'],
    state: { phase: CLOSED, clientSide: 'closing' },
  },
  {
    name: 'a client that ended its side while the app decided gets no websocket: closed',
    from: { sockets: true },
    events: [
      { on: 'client-data', text: upgrade.replace('Upgrade\r\n', 'Upgrade, close\r\n') },
      { on: 'client-end' },
      { on: 'ws-open', now: 1000 },
    ],
    actions: ['ws-upgrade GET /ws close', 'close-client'],
    state: { phase: CLOSED, clientSide: 'ended-closing' },
  },
]
