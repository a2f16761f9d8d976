/**
 * A channel's webhook deliveries (…/integration_points/:id/deliveries): newest first, a page at a
 * time, each with its status, attempts, the receiver's answer and the last error; a failed one has a
 * Replay button (…/deliveries/:job/replay), after which the log is read again until it has ended.
 */
import { useEffect, useState } from 'preact/hooks'
import { call, errorText, query } from './api'
import { when } from './history'
import { ErrorNote } from './error-note'

interface Delivery {
  id: string
  event: string
  status: 'pending' | 'running' | 'done' | 'failed'
  attempts: number
  created: string
  finished: string | null
  url: string
  http_status: number | null
  latency_ms: number | null
  last_error: string | null
}

const PAGE = 25
/** How often the log is read again while a replayed delivery has not ended, and for how long at most. */
const WATCH_MS = 1000
const WATCH_READS = 60

const ended = (d: Delivery) => d.status === 'done' || d.status === 'failed'

export function Deliveries(props: { channelUrl: string }) {
  const log = `${props.channelUrl}/deliveries`
  const [offset, setOffset] = useState(0)
  const [rows, setRows] = useState<Delivery[] | null>(null)
  const [error, setError] = useState('')
  const [status, setStatus] = useState('')
  const [reads, setReads] = useState(0)
  /** The replayed delivery whose outcome is awaited, and the reads left to await it. */
  const [watched, setWatched] = useState<string | null>(null)
  const [watchReads, setWatchReads] = useState(0)

  useEffect(() => {
    let live = true
    call<Delivery[]>('GET', log + query({ offset, limit: PAGE })).then(
      (a) => {
        if (!live) return
        setRows(a.data)
        setError('')
        const d = watched ? a.data.find((r) => r.id === watched) : undefined
        if (d && ended(d)) {
          setWatched(null)
          setStatus(
            d.status === 'done'
              ? `Replayed: ${d.event} was delivered${d.http_status ? ` (HTTP ${d.http_status})` : ''}.`
              : `Replayed: ${d.event} failed again: ${d.last_error ?? 'no answer'}.`,
          )
        }
      },
      (err) => live && setError(errorText(err)),
    )
    return () => {
      live = false
    }
  }, [log, offset, reads])
  useEffect(() => {
    if (!watched) return
    if (watchReads <= 0) {
      // a retry far off, or a delivery gone from this page: Refresh reads it when the reader wants
      setWatched(null)
      setStatus('The replayed delivery has not ended yet: Refresh shows where it is.')
      return
    }
    const timer = setTimeout(() => {
      setWatchReads((n) => n - 1)
      setReads((n) => n + 1)
    }, WATCH_MS)
    return () => clearTimeout(timer)
  }, [watched, reads])

  const replay = async (d: Delivery) => {
    setStatus('')
    setError('')
    try {
      await call('POST', `${log}/${encodeURIComponent(d.id)}/replay`)
      setStatus(`Replaying ${d.event}: it is due again, waiting for its outcome…`)
      setWatched(d.id)
      setWatchReads(WATCH_READS)
      setReads((n) => n + 1)
    } catch (err) {
      setError(errorText(err))
    }
  }

  return (
    <section class="deliveries" aria-labelledby="deliveries-title">
      <div class="title-row">
        <h2 id="deliveries-title">Webhook deliveries</h2>
        <button type="button" onClick={() => setReads((n) => n + 1)}>
          Refresh
        </button>
      </div>
      <ErrorNote text={error} />
      <p role="status" id="deliveries-status">
        {status}
      </p>
      {rows === null ? <p>Loading…</p> : null}
      {rows?.length === 0 ? <p>{offset ? 'No more deliveries.' : 'No deliveries yet.'}</p> : null}
      {rows?.length ? (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Created</th>
                <th scope="col">Finished</th>
                <th scope="col">Answer</th>
                <th scope="col">Last error</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id} data-delivery={d.id}>
                  <td data-label="Event">{d.event}</td>
                  <td data-label="Status">
                    <span class={`state ${d.status}`}>{d.status}</span>
                  </td>
                  <td data-label="Attempts">{d.attempts}</td>
                  <td data-label="Created">
                    <time dateTime={d.created}>{when(d.created)}</time>
                  </td>
                  <td data-label="Finished">
                    {d.finished ? <time dateTime={d.finished}>{when(d.finished)}</time> : '—'}
                  </td>
                  <td data-label="Answer">
                    {d.http_status === null ? '—' : `HTTP ${d.http_status}`}
                    {d.latency_ms === null ? '' : ` in ${d.latency_ms} ms`}
                  </td>
                  <td data-label="Last error">{d.last_error ?? '—'}</td>
                  <td class="row-actions">
                    {d.status === 'failed' ? (
                      <button
                        type="button"
                        onClick={() => replay(d)}
                        aria-label={`Replay ${d.event} of ${when(d.created)}`}
                      >
                        Replay
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <nav class="pager" aria-label="Pages of deliveries">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Newer
        </button>
        <span>Page {offset / PAGE + 1}</span>
        <button type="button" disabled={(rows?.length ?? 0) < PAGE} onClick={() => setOffset(offset + PAGE)}>
          Older
        </button>
      </nav>
    </section>
  )
}
