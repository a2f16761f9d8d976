/**
 * The licence (master domain): one object, `GET /rest/v1/master/license`, shown as facts (its
 * limits `dql.*` and features `sqf.*` among them); a new licence token replaces it with a POST of
 * the token as a JSON string, answered with the licence then in force.
 */
import { useEffect, useState } from 'preact/hooks'
import { call, errorText } from './api'
import { cellText, columnsOf, get, labelOf } from './schema'
import type { Collection } from './spec'
import { ErrorNote } from './error-note'

export function LicencePage(props: { collection: Collection }) {
  const c = props.collection
  const [licence, setLicence] = useState<unknown>(null)
  const [token, setToken] = useState('')
  const [error, setError] = useState('')
  const [status, setStatus] = useState('')

  useEffect(() => {
    call('GET', c.path).then(
      (a) => setLicence(a.data),
      (err) => setError(errorText(err)),
    )
  }, [c.path])

  const install = async (e: Event) => {
    e.preventDefault()
    setStatus('')
    setError('')
    if (!token.trim()) return setError('Paste the licence token first.')
    try {
      setLicence((await call('POST', c.path, token.trim())).data)
      setToken('')
      setStatus('The licence is installed.')
    } catch (err) {
      setError(errorText(err))
    }
  }
  const columns = columnsOf(c.item)
  const shown = columns.length ? columns : Object.keys((licence as object) ?? {})
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{c.title}</h1>
      {licence ? (
        <>
          <p id="licence-kind">
            {get(licence, 'evaluation') === true
              ? 'No licence is in force: the evaluation licence applies.'
              : `Licensed${get(licence, 'expires') ? ` until ${String(get(licence, 'expires'))}` : ''}.`}
          </p>
          <dl class="facts">
            {shown.map((col) => (
              <div key={col}>
                <dt>{col.includes('.') ? col : labelOf(col)}</dt>
                <dd>{cellText(get(licence, col)) || '—'}</dd>
              </div>
            ))}
          </dl>
        </>
      ) : null}
      {c.create ? (
        <form class="form" onSubmit={install} noValidate>
          <h2>Install a licence</h2>
          <div class="field">
            <label for="licence-token">Licence token</label>
            <textarea
              id="licence-token"
              rows={4}
              spellcheck={false}
              value={token}
              aria-describedby="licence-token-hint"
              onInput={(e) => setToken(e.currentTarget.value)}
            />
            <small class="hint" id="licence-token-hint">
              The token the licensor issued for this installation ({String(get(licence, 'installation') ?? '…')}). It
              replaces the licence in force.
            </small>
          </div>
          <div class="actions">
            <button type="submit" class="primary">
              Install
            </button>
          </div>
        </form>
      ) : null}
      <ErrorNote text={error} />
      <p role="status">{status}</p>
    </section>
  )
}
