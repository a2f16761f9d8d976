/**
 * A collection's list: server paging (offset, limit, the total from X-Total-Count), sorting by a
 * column (`order`), the filter (./filter.tsx), a mask of columns (`mask`), and per row: open, delete.
 */
import { useEffect, useState } from 'preact/hooks'
import { deleteItem, itemUrl } from './actions'
import { call, errorText, query } from './api'
import { FilterPanel, filterColumns } from './filter'
import { type Interval, IntervalPicker, lastDays } from './interval'
import { LiveBadge } from './live-badge'
import { useLive } from './live'
import { href } from './router'
import { cellText, columnsOf, get, labelOf, nameOf } from './schema'
import { useSession } from './session'
import type { Collection } from './spec'
import { ErrorNote } from './error-note'

const SIZES = [25, 50, 100]

interface Order {
  path: string
  desc: boolean
}

/** Columns shown at first: all but the bookkeeping ones (still in the mask). */
const defaultColumns = (all: string[]) => {
  const shown = all.filter((c) => !c.startsWith('ext.') && c !== 'opts.comment' && c !== 'id')
  return shown.length ? shown : all
}

export function ListPage(props: { collection: Collection }) {
  const c = props.collection
  const { session } = useSession()
  const all = columnsOf(c.listItem)
  const key = c.itemParam ?? 'id'
  const [shown, setShown] = useState(() => defaultColumns(all))
  const [limit, setLimit] = useState(25)
  const [offset, setOffset] = useState(0)
  const [order, setOrder] = useState<Order | null>(null)
  const [filter, setFilter] = useState('')
  // a partitioned class lists the records of a range of dates
  const [interval, setRange] = useState<Interval | undefined>(() => (c.partitioned ? lastDays(31) : undefined))
  const [rows, setRows] = useState<unknown[] | null>(null)
  const [total, setTotal] = useState<number | null>(null)
  const [error, setError] = useState('')
  const [reloads, setReloads] = useState(0)
  // a change made elsewhere re-reads the page shown
  const liveState = useLive(c.path, () => setReloads((n) => n + 1))

  const mask = shown.length && shown.length < all.length ? [...new Set([key, ...shown])].join(',') : undefined
  useEffect(() => {
    let live = true
    const url =
      c.path +
      query({
        count: c.counts === false ? undefined : 'true',
        offset,
        limit,
        filter: filter || undefined,
        interval: interval && JSON.stringify(interval),
        order: order ? JSON.stringify([order.desc ? `-${order.path}` : order.path]) : undefined,
        mask,
      })
    call<unknown[]>('GET', url).then(
      (a) => {
        if (!live) return
        setRows(Array.isArray(a.data) ? a.data : [a.data])
        const count = a.headers.get('x-total-count')
        setTotal(count === null ? null : Number(count))
        setError('')
      },
      (err) => live && (setError(errorText(err)), setRows([])),
    )
    return () => {
      live = false
    }
  }, [c.path, offset, limit, filter, order?.path, order?.desc, mask, reloads, interval?.join()])

  const sort = (path: string) => {
    setOrder(order?.path === path ? (order.desc ? null : { path, desc: true }) : { path, desc: false })
    setOffset(0)
  }
  const remove = async (row: unknown) => {
    const id = String(get(row, key))
    try {
      if (await deleteItem(c, id, nameOf(row, key), session)) setReloads((n) => n + 1)
    } catch (err) {
      setError(errorText(err))
    }
  }
  // a file's row downloads it (its content is no JSON item to edit)
  const rowHref = (id: string) => (c.page === 'files' ? `${itemUrl(c, id)}?attachment=true` : href.item(c.key, id))
  const end = offset + (rows?.length ?? 0)
  const columns = all.filter((col) => shown.includes(col))
  return (
    <section aria-labelledby="page-title">
      <div class="title-row">
        <h1 id="page-title">{c.title}</h1>
        <LiveBadge state={liveState} />
        {c.create || c.upload ? (
          <a class="button primary" href={href.create(c.key)}>
            {c.createLabel ?? `New ${c.noun}`}
          </a>
        ) : null}
      </div>
      <div class="tools">
        {interval ? (
          <IntervalPicker
            applied={interval}
            onApply={(i) => {
              setRange(i)
              setOffset(0)
            }}
          />
        ) : null}
        <FilterPanel
          columns={filterColumns(c.listItem)}
          applied={filter}
          onApply={(f) => {
            setFilter(f)
            setOffset(0)
          }}
        />
        <details class="panel">
          <summary>Columns</summary>
          <fieldset class="columns">
            <legend>Columns shown (the list's mask)</legend>
            {all.map((col) => (
              <label key={col} class="check">
                <input
                  type="checkbox"
                  checked={shown.includes(col)}
                  onChange={(e) => setShown(e.currentTarget.checked ? [...shown, col] : shown.filter((s) => s !== col))}
                />{' '}
                {col}
              </label>
            ))}
          </fieldset>
        </details>
      </div>
      <ErrorNote text={error} />
      <p role="status" class="count" id="list-status">
        {rows === null
          ? 'Loading…'
          : rows.length === 0
            ? `No ${c.title.toLowerCase()}${filter ? ' match the filter' : ''}.`
            : `${offset + 1}–${end}${total !== null ? ` of ${total}` : ''}`}
      </p>
      <div class="table-scroll">
        <table>
          <thead>
            <tr>
              {columns.map((col) => {
                const sorted = order?.path === col ? (order.desc ? 'descending' : 'ascending') : undefined
                return (
                  <th key={col} aria-sort={sorted} scope="col">
                    <button type="button" class="sort" onClick={() => sort(col)} title={`Sort by ${col}`}>
                      {col.includes('.') ? col : labelOf(col)}
                      <span aria-hidden="true">
                        {sorted === 'ascending' ? ' ▲' : sorted === 'descending' ? ' ▼' : ''}
                      </span>
                    </button>
                  </th>
                )
              })}
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(rows ?? []).map((row, i) => {
              const id = get(row, key)
              const name = nameOf(row, key)
              return (
                <tr key={String(id ?? i)}>
                  {columns.map((col, j) => (
                    <td key={col} data-label={col}>
                      {j === 0 && c.itemParam && id !== undefined ? (
                        <a href={rowHref(String(id))}>{cellText(get(row, col)) || String(id)}</a>
                      ) : (
                        cellText(get(row, col))
                      )}
                    </td>
                  ))}
                  <td class="row-actions">
                    {c.itemParam && id !== undefined ? (
                      <a href={rowHref(String(id))} aria-label={`${c.page === 'files' ? 'Download' : 'Open'} ${name}`}>
                        {c.page === 'files' ? 'Download' : 'Open'}
                      </a>
                    ) : null}
                    {c.canDelete && id !== undefined ? (
                      <button
                        type="button"
                        class="link danger"
                        onClick={() => remove(row)}
                        aria-label={`Delete ${name}`}
                      >
                        Delete
                      </button>
                    ) : null}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - limit))}>
          Previous page
        </button>
        <span>
          Page {Math.floor(offset / limit) + 1}
          {total !== null ? ` of ${Math.max(1, Math.ceil(total / limit))}` : ''}
        </span>
        <button
          type="button"
          disabled={total !== null ? end >= total : (rows?.length ?? 0) < limit}
          onClick={() => setOffset(offset + limit)}
        >
          Next page
        </button>
        <label for="page-size">Per page</label>
        <select
          id="page-size"
          value={String(limit)}
          onChange={(e) => {
            setLimit(Number(e.currentTarget.value))
            setOffset(0)
          }}
        >
          {SIZES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </nav>
    </section>
  )
}
