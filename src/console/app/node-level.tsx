/**
 * A node's log level (PATCH /rest/v1/master/nodes/:name {maxLogLevel}): a select of the levels the
 * API's schema accepts, saved at once with a button; the node's answer is its level as it now is.
 */
import { useState } from 'preact/hooks'
import { call, errorText } from './api'
import { plain } from './schema'
import type { Collection } from './spec'
import { ErrorNote } from './error-note'

export function NodeLogLevel(props: { collection: Collection; url: string; current: string; onSaved: () => void }) {
  const levels = (plain(props.collection.change?.properties?.maxLogLevel ?? {}).enum ?? []).map(String)
  const [level, setLevel] = useState(props.current)
  const [status, setStatus] = useState('')
  const [error, setError] = useState('')
  const save = async (e: Event) => {
    e.preventDefault()
    setStatus('')
    setError('')
    try {
      const a = await call<{ maxLogLevel: string }>('PATCH', props.url, { maxLogLevel: level })
      setStatus(`The log level is now ${a.data.maxLogLevel}.`)
      props.onSaved()
    } catch (err) {
      setError(errorText(err))
    }
  }
  return (
    <form class="form log-level" onSubmit={save} noValidate>
      <div class="field">
        <label for="node-log-level">Log level</label>
        <div class="row">
          <select
            id="node-log-level"
            value={level}
            onChange={(e) => setLevel(e.currentTarget.value)}
            aria-describedby="node-log-level-hint"
          >
            {levels.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
          <button type="submit" class="primary" disabled={level === props.current}>
            Set log level
          </button>
        </div>
        <small class="hint" id="node-log-level-hint">
          The most detailed lines the node writes; off writes none. It changes at once, wherever the node runs.
        </small>
      </div>
      <ErrorNote text={error} />
      <p role="status" id="log-level-status">
        {status}
      </p>
    </form>
  )
}
