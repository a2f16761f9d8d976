/**
 * Changes from the journal, each with who, when, what, and the before/after of its fields: an
 * object's history (on its page), or the entries a journal search found (./journal.tsx).
 */
import { useEffect, useState } from 'preact/hooks'
import { errorText } from './api'
import { type Change, type DiffRow, diffOf, historyOf } from './journal-data'

export function DiffTable(props: { rows: DiffRow[] }) {
  if (!props.rows.length) return <p>No field changed.</p>
  return (
    <div class="table-scroll">
      <table class="diff">
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr key={r.field}>
              <th scope="row">{r.field}</th>
              <td class="before">{r.before}</td>
              <td class="after">{r.after}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

export const when = (iso: string) => iso.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC')

export function ChangeSummary(props: { change: Change }) {
  const c = props.change
  return (
    <>
      <time dateTime={c.dtutc}>{when(c.dtutc)}</time> · <strong>{c.cmdtype}</strong> by {c.modifiername}
      {c.fields ? ` · ${c.fields}` : ''}
    </>
  )
}

/** An object's own history, newest first. */
export function History(props: { objtype: string; objid: string; version?: string }) {
  const [changes, setChanges] = useState<Change[] | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    historyOf(props.objtype, props.objid).then(setChanges, (err) => setError(errorText(err)))
  }, [props.objtype, props.objid, props.version])
  return (
    <section class="history" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      {error ? <p class="error">{error}</p> : null}
      {changes === null && !error ? <p role="status">Loading…</p> : null}
      {changes?.length === 0 ? <p>The journal holds no change of it.</p> : null}
      <ul class="changes">
        {(changes ?? [])
          .map((c, i) => ({ c, rows: diffOf(c, changes![i - 1]) }))
          .reverse()
          .map(({ c, rows }) => (
            <li key={`${c.dtutc}-${c.cmdtype}`}>
              <details>
                <summary>
                  <ChangeSummary change={c} />
                </summary>
                <DiffTable rows={rows} />
              </details>
            </li>
          ))}
      </ul>
    </section>
  )
}
