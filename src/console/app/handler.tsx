/**
 * A script handler (GET …/svcscript_runtimes/:id): where it runs, its state and, once it ended, its
 * outcome (the result, or why it failed or stopped), and the lines its script logged; read again
 * while it runs, with a Stop button (DELETE: the first stop takes the script's onStop branch).
 */
import { useEffect, useState } from 'preact/hooks'
import { API, call, errorText } from './api'
import { confirm } from './dialogs'
import { when } from './history'
import { href } from './router'
import type { Collection } from './spec'
import { ErrorNote } from './error-note'

const BASE = `${API}/service/svcscript_runtimes`
/** How often a running handler is read again. */
const POLL_MS = 500

interface Handler {
  id: string
  code: string
  name: string
  node: string
  site: string
  starttime: string
  status: 'running' | 'done' | 'failed' | 'stopped' | 'limit'
  endtime?: string
  durationMs?: number
  result?: unknown
  error?: string
  limit?: string
  log: { time: string; level: string; message: string }[]
}

const STATES: Record<Handler['status'], string> = {
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
  stopped: 'Stopped',
  limit: 'Ended at a limit',
}

const timeOf = (iso: string) => iso.slice(11, 23)

export function HandlerView(props: { id: string }) {
  const url = `${BASE}/${encodeURIComponent(props.id)}`
  const [h, setH] = useState<Handler | null>(null)
  const [error, setError] = useState('')
  const [reads, setReads] = useState(0)
  const [stopping, setStopping] = useState(false)

  useEffect(() => {
    let live = true
    call<Handler>('GET', url).then(
      (a) => {
        if (!live) return
        setH(a.data)
        setError('')
      },
      (err) => live && setError(errorText(err)),
    )
    return () => {
      live = false
    }
  }, [url, reads])
  useEffect(() => {
    if (h?.status !== 'running') return
    const timer = setTimeout(() => setReads((n) => n + 1), POLL_MS)
    return () => clearTimeout(timer)
  }, [h, reads])

  const stop = async () => {
    if (!h) return
    const again = stopping
    const sure = await confirm(
      again ? 'Stop it for good?' : 'Stop this handler?',
      again
        ? `The handler of ${h.code} is still running: a second stop ends it at once.`
        : `The handler of ${h.code} is asked to stop: a script with an onStop branch runs it first.`,
      again ? 'End it' : 'Stop',
    )
    if (!sure) return
    try {
      await call('DELETE', url)
      setStopping(true)
      setReads((n) => n + 1)
    } catch (err) {
      setError(errorText(err))
    }
  }

  if (!h)
    return error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : (
      <p role="status">Loading…</p>
    )
  return (
    <div class="handler">
      <dl class="facts">
        <div>
          <dt>State</dt>
          <dd>
            <span class={`state ${h.status}`} id="handler-state">
              {STATES[h.status]}
              {h.limit ? ` (${h.limit})` : ''}
            </span>
          </dd>
        </div>
        <div>
          <dt>Script</dt>
          <dd>
            {h.code}
            {h.name ? ` — ${h.name}` : ''}
          </dd>
        </div>
        <div>
          <dt>Node</dt>
          <dd>
            {h.node} (site {h.site})
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <time dateTime={h.starttime}>{when(h.starttime)}</time>
          </dd>
        </div>
        {h.endtime ? (
          <div>
            <dt>Ended</dt>
            <dd>
              <time dateTime={h.endtime}>{when(h.endtime)}</time>
              {h.durationMs !== undefined ? ` after ${h.durationMs} ms` : ''}
            </dd>
          </div>
        ) : null}
      </dl>
      <ErrorNote text={error} />
      {h.status === 'running' ? (
        <div class="actions">
          <button type="button" class="danger" onClick={stop}>
            {stopping ? 'Stop again (end it)' : 'Stop'}
          </button>
        </div>
      ) : (
        <section aria-labelledby="outcome-title" class="outcome" aria-live="polite">
          <h3 id="outcome-title">Outcome</h3>
          {h.status === 'done' ? (
            h.result === undefined ? (
              <p>It returned nothing.</p>
            ) : (
              <pre id="handler-result">{JSON.stringify(h.result, null, 2)}</pre>
            )
          ) : (
            <p class="error" id="handler-error">
              {h.error}
            </p>
          )}
        </section>
      )}
      <section aria-labelledby="log-title">
        <h3 id="log-title">Log</h3>
        {h.log.length ? (
          <ol class="log" id="handler-log">
            {h.log.map((line, i) => (
              <li key={i} class={`level-${line.level}`}>
                <time dateTime={line.time}>{timeOf(line.time)}</time> <span class="level">{line.level}</span>{' '}
                <span class="message">{line.message}</span>
              </li>
            ))}
          </ol>
        ) : (
          <p>Nothing logged{h.status === 'running' ? ' yet' : ''}.</p>
        )}
      </section>
    </div>
  )
}

/** The page of a handler (#/service/svcscript_runtimes/item/<id>). */
export function HandlerPage(props: { collection: Collection; id: string }) {
  return (
    <section aria-labelledby="page-title">
      <p class="crumbs">
        <a href={href.list(props.collection.key)}>{props.collection.title}</a>
      </p>
      <h1 id="page-title">Script handler {props.id}</h1>
      <HandlerView id={props.id} />
    </section>
  )
}
