/**
 * The journal browser: changes by object (type and id), by user and by time, newest first, paged,
 * each opening its before/after (the previous change of the same object is the before).
 */
import { useEffect, useState } from 'preact/hooks'
import { errorText } from './api'
import { ChangeSummary, DiffTable } from './history'
import { type Change, type DiffRow, diffOf, historyOf, type Search, searchJournal } from './journal-data'
import { href } from './router'
import type { Collection } from './spec'
import { ErrorNote } from './error-note'

const LIMIT = 50
const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)

interface Form {
  objtype: string
  objid: string
  user: string
  from: string
  to: string
}

function ChangeRow(props: { change: Change; collections: Collection[] }) {
  const c = props.change
  const [rows, setRows] = useState<DiffRow[] | null>(null)
  const [error, setError] = useState('')
  const owner = props.collections.find((x) => x.objtype === c.objtype)
  const open = async () => {
    try {
      const all = await historyOf(c.objtype, c.objid)
      const at = all.findIndex((x) => x.dtutc === c.dtutc && x.cmdtype === c.cmdtype)
      setRows(diffOf(c, at > 0 ? all[at - 1] : undefined))
    } catch (err) {
      setError(errorText(err))
    }
  }
  return (
    <li>
      <details onToggle={(e) => (e.currentTarget as HTMLDetailsElement).open && rows === null && void open()}>
        <summary>
          <ChangeSummary change={c} /> · {c.objtype}{' '}
          {owner && c.cmdtype !== 'delete' ? <a href={href.item(owner.key, c.objid)}>{c.objid}</a> : c.objid}
        </summary>
        {error ? <p class="error">{error}</p> : rows ? <DiffTable rows={rows} /> : <p role="status">Loading…</p>}
      </details>
    </li>
  )
}

export function JournalPage(props: { collections: Collection[] }) {
  const types = props.collections.map((c) => c.objtype).filter(Boolean) as string[]
  const [form, setForm] = useState<Form>({
    objtype: '',
    objid: '',
    user: '',
    from: local(new Date(Date.now() - 86_400_000)),
    to: '',
  })
  /** The journal's params select by object (type and id) or by time; a type alone is a filter. */
  const [search, setSearch] = useState<{ params: Search; user: string; objtype?: string }>()
  const [offset, setOffset] = useState(0)
  const [found, setFound] = useState<{ changes: Change[]; total: number | null } | null>(null)
  const [error, setError] = useState('')
  const set = (k: keyof Form) => (e: { currentTarget: HTMLInputElement }) =>
    setForm({ ...form, [k]: e.currentTarget.value })

  useEffect(() => {
    if (!search) return
    const parts = [
      ...(search.objtype ? [['==', ['property', 'objtype'], search.objtype]] : []),
      ...(search.user ? [['ilike', ['property', 'modifiername'], `%${search.user}%`]] : []),
    ]
    const filter = parts.length ? JSON.stringify(parts.length === 1 ? parts[0] : ['and', ...parts]) : undefined
    searchJournal(search.params, { order: '"-dtutc"', offset, limit: LIMIT, count: 'true', filter }).then(
      (f) => (setFound(f), setError('')),
      (err) => (setError(errorText(err)), setFound(null)),
    )
  }, [search, offset])
  const submit = (e: Event) => {
    e.preventDefault()
    const params: Search = {}
    const objtype = form.objtype.trim()
    const objid = form.objid.trim()
    if (objtype && objid) Object.assign(params, { objtype, objid })
    if (form.from) params.dtstart = new Date(form.from).toISOString()
    if (form.to) params.dtstop = new Date(form.to).toISOString()
    if (!params.objid && !params.dtstart && !params.dtstop)
      params.dtstart = new Date(Date.now() - 86_400_000).toISOString()
    setOffset(0)
    setSearch({ params, user: form.user.trim(), objtype: objtype && !objid ? objtype : undefined })
  }
  useEffect(() => submit(new Event('submit')), [])
  const end = offset + (found?.changes.length ?? 0)
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Journal</h1>
      <form class="panel filter" onSubmit={submit}>
        <div class="grid">
          <div class="field">
            <label for="j-objtype">Object type</label>
            <input id="j-objtype" list="j-types" value={form.objtype} onInput={set('objtype')} />
            <datalist id="j-types">
              {types.map((t) => (
                <option key={t} value={t} />
              ))}
            </datalist>
          </div>
          <div class="field">
            <label for="j-objid">Object id</label>
            <input id="j-objid" value={form.objid} onInput={set('objid')} />
          </div>
          <div class="field">
            <label for="j-user">User</label>
            <input id="j-user" type="search" value={form.user} onInput={set('user')} />
          </div>
          <div class="field">
            <label for="j-from">From</label>
            <input id="j-from" type="datetime-local" value={form.from} onInput={set('from')} />
          </div>
          <div class="field">
            <label for="j-to">To</label>
            <input id="j-to" type="datetime-local" value={form.to} onInput={set('to')} />
          </div>
        </div>
        <button type="submit" class="primary">
          Search
        </button>
      </form>
      <ErrorNote text={error} />
      <p role="status" id="list-status" class="count">
        {found === null
          ? ''
          : found.changes.length
            ? `${offset + 1}–${end}${found.total !== null ? ` of ${found.total}` : ''}`
            : 'No changes found.'}
      </p>
      <ul class="changes">
        {(found?.changes ?? []).map((c) => (
          <ChangeRow key={`${c.dtutc}-${c.objid}-${c.cmdtype}`} change={c} collections={props.collections} />
        ))}
      </ul>
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - LIMIT))}>
          Previous page
        </button>
        <button
          type="button"
          disabled={found?.total == null || end >= found.total}
          onClick={() => setOffset(offset + LIMIT)}
        >
          Next page
        </button>
      </nav>
    </section>
  )
}
