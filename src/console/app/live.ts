/**
 * Live lists: one websocket to /ws for the tab (signed in by the session cookie, which the browser
 * sends with the upgrade), a `modelevents.data_changed` subscription per open list on its collection.
 * A change re-reads the list (coalesced: one read per burst). A dropped socket is opened again after
 * a growing wait (1 s doubling to 30 s), once the session is known to be alive, and the lists re-read
 * then (changes may have been missed meanwhile). The socket closes a few seconds after the last list.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { call } from './api'
import { SESSION_URL } from './session'

/** `connecting` before the first answer and while reconnecting; `off` when the collection cannot be subscribed. */
export type LiveState = 'connecting' | 'live' | 'off'

interface Sub {
  classpath: string
  changed: () => void
  state: (s: LiveState) => void
  /** Refused by the service (a collection without change events): not asked again. */
  refused: boolean
  /** Asked again on a new socket: its answer re-reads what may have been missed meanwhile. */
  resync: boolean
}

const EXPIRES_SEC = 3600
const RENEW_MS = 20 * 60_000
const MAX_WAIT_MS = 30_000
const IDLE_CLOSE_MS = 5_000
const COALESCE_MS = 300

const subs = new Map<string, Sub>()
let socket: WebSocket | null = null
let failures = 0
let numbered = 0
let reconnect: ReturnType<typeof setTimeout> | undefined
let idle: ReturnType<typeof setTimeout> | undefined
let renew: ReturnType<typeof setInterval> | undefined

const send = (frame: unknown) => socket?.readyState === WebSocket.OPEN && socket.send(JSON.stringify(frame))
const ask = (id: string, s: Sub) =>
  send(['subscribe', { id, expires: EXPIRES_SEC, events: ['modelevents.data_changed'], classpath: s.classpath }])

function open() {
  clearTimeout(reconnect)
  reconnect = undefined
  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`)
  socket = ws
  ws.onopen = () => {
    for (const [id, s] of subs) if (!s.refused) ask(id, s)
    // a subscription lives `expires` seconds from its last subscribe: renewed well before
    renew = setInterval(() => {
      for (const [id, s] of subs) if (!s.refused) send(['subscribe', { id, expires: EXPIRES_SEC }])
    }, RENEW_MS)
  }
  ws.onmessage = (e) => {
    let frame: unknown
    try {
      frame = JSON.parse(String(e.data))
    } catch {
      return
    }
    if (!Array.isArray(frame)) return
    const [kind, body] = frame as [string, { id?: string; subscription?: string; error?: unknown; expires?: number }]
    if (kind === 'subscribe' && body.id && body.expires !== 0) {
      const s = subs.get(body.id)
      if (!s) return
      if (body.error) {
        s.refused = true
        return s.state('off')
      }
      // a socket that subscribes is a good one: the next drop waits from 1 s again
      failures = 0
      if (s.resync) s.changed()
      s.resync = false
      s.state('live')
    } else if (kind === 'event' && body.subscription) subs.get(body.subscription)?.changed()
  }
  ws.onclose = () => {
    if (socket !== ws) return
    socket = null
    clearInterval(renew)
    if (!subs.size) return
    for (const s of subs.values()) {
      if (s.refused) continue
      s.resync = true
      s.state('connecting')
    }
    const wait = Math.min(MAX_WAIT_MS, 1000 * 2 ** failures++) * (0.8 + Math.random() * 0.4)
    reconnect = setTimeout(retry, wait)
  }
}

/** Opens again only for a live session: a handshake refused for lack of one would be a console error. */
async function retry() {
  reconnect = undefined
  if (!subs.size || socket) return
  try {
    await call('GET', SESSION_URL)
  } catch {
    for (const s of subs.values()) s.state('off')
    return
  }
  if (subs.size && !socket) open()
}

function close() {
  clearTimeout(reconnect)
  clearInterval(renew)
  reconnect = undefined
  const ws = socket
  socket = null
  ws?.close(1000)
}

/** Changes of the collection at `classpath` call `changed`; answers the unsubscribe. */
export function subscribe(classpath: string, changed: () => void, state: (s: LiveState) => void): () => void {
  const id = `list-${++numbered}`
  const s: Sub = { classpath, changed, state, refused: false, resync: false }
  subs.set(id, s)
  clearTimeout(idle)
  if (!socket && !reconnect) open()
  else ask(id, s)
  return () => {
    subs.delete(id)
    send(['subscribe', { id, expires: 0 }])
    if (!subs.size) idle = setTimeout(close, IDLE_CLOSE_MS)
  }
}

/** A list's live state; `refresh` runs once per burst of changes of its collection. */
export function useLive(classpath: string, refresh: () => void): LiveState {
  const [state, setState] = useState<LiveState>('connecting')
  const latest = useRef(refresh)
  latest.current = refresh
  useEffect(() => {
    let pending: ReturnType<typeof setTimeout> | undefined
    const changed = () => {
      pending ??= setTimeout(() => {
        pending = undefined
        latest.current()
      }, COALESCE_MS)
    }
    const stop = subscribe(classpath, changed, setState)
    return () => {
      clearTimeout(pending)
      stop()
    }
  }, [classpath])
  return state
}
