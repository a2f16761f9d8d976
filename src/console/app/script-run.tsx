/**
 * Starting a service script from its page: the start parameters the API takes (the handler create
 * body's `startparam1..9`, any JSON value each), a POST to …/svcscript_runtimes, then the handler's
 * state, outcome and log (./handler.tsx) until it ends. It runs the script as saved.
 */
import { useEffect, useState } from 'preact/hooks'
import { call, errorText } from './api'
import { HandlerView } from './handler'
import { href } from './router'
import { type Collection, loadCollections } from './spec'
import { ErrorNote } from './error-note'

const HANDLERS = 'service/svcscript_runtimes'

/** A parameter as typed: JSON when it reads as JSON (42, true, {"a": 1}, "quoted"), else the text itself. */
function paramOf(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export function ScriptRun(props: { code: string; unsaved: boolean }) {
  const [handlers, setHandlers] = useState<Collection | null>(null)
  const [values, setValues] = useState<Record<string, string>>({})
  const [started, setStarted] = useState<string | null>(null)
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    loadCollections().then((all) => setHandlers(all.find((c) => c.key === HANDLERS) ?? null))
  }, [])
  // the parameters the start body declares, in order
  const params = Object.keys(handlers?.create?.properties ?? {}).filter((p) => /^startparam\d+$/.test(p))
  if (!handlers?.create) return null

  const start = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError('')
    try {
      const body: Record<string, unknown> = { code: props.code }
      for (const p of params) if ((values[p] ?? '').trim() !== '') body[p] = paramOf(values[p]!.trim())
      const a = await call<{ id: string }>('POST', handlers.path, body)
      setStarted(a.data.id)
    } catch (err) {
      setError(errorText(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <section class="script-run" aria-labelledby="run-title">
      <h2 id="run-title">Start the script</h2>
      <form class="form" onSubmit={start} noValidate>
        <p class="hint">
          Starts the script as saved{props.unsaved ? ': save your changes first to run them' : ''}. A parameter is read
          as JSON when it is JSON (42, true, {'{"a": 1}'}), else as text; the script reads it with startparam(n).
        </p>
        <div class="params">
          {params.map((p) => {
            const n = p.slice('startparam'.length)
            return (
              <div class="field" key={p}>
                <label for={`run-${p}`}>Parameter {n}</label>
                <input
                  id={`run-${p}`}
                  value={values[p] ?? ''}
                  onInput={(e) => setValues({ ...values, [p]: e.currentTarget.value })}
                  spellcheck={false}
                />
              </div>
            )
          })}
        </div>
        <ErrorNote text={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Start
          </button>
        </div>
      </form>
      {started ? (
        <section aria-labelledby="started-title">
          <h3 id="started-title">
            Handler <a href={href.item(HANDLERS, started)}>{started}</a>
          </h3>
          <HandlerView key={started} id={started} />
        </section>
      ) : null}
    </section>
  )
}
