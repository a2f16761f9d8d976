/**
 * The list's filter: a field per filterable column (text matches anywhere, case aside; other
 * values exactly), and the filter as JSON for experts, which the fields fill in when applied.
 */
import { useState } from 'preact/hooks'
import { labelOf, type Schema, typeOf } from './schema'
import { ErrorNote } from './error-note'

export interface FilterColumn {
  path: string
  type: 'text' | 'number' | 'boolean' | 'enum'
  options?: string[]
}

export function filterColumns(item: Schema | undefined): FilterColumn[] {
  const out: FilterColumn[] = []
  const walk = (s: Schema | undefined, prefix: string) => {
    for (const [name, p] of Object.entries(s?.properties ?? {})) {
      const path = prefix + name
      const type = typeOf(p)
      if (type === 'object' && !prefix) walk(p, `${path}.`)
      else if (p.enum) out.push({ path, type: 'enum', options: p.enum.map(String) })
      else if (type === 'boolean') out.push({ path, type: 'boolean' })
      else if (type === 'integer' || type === 'number') out.push({ path, type: 'number' })
      else if (type === 'string' && p.format !== 'date-time') out.push({ path, type: 'text' })
    }
  }
  walk(item, '')
  return out
}

type Expr = unknown[]

export function expressionOf(columns: FilterColumn[], values: Record<string, string>): Expr | undefined {
  const parts: Expr[] = []
  for (const c of columns) {
    const v = (values[c.path] ?? '').trim()
    if (!v) continue
    const prop = ['property', c.path]
    if (c.type === 'text') parts.push(['ilike', prop, `%${v}%`])
    else if (c.type === 'number') parts.push(['==', prop, Number(v)])
    else if (c.type === 'boolean') parts.push(['==', prop, v === 'true'])
    else parts.push(['==', prop, v])
  }
  if (!parts.length) return undefined
  return parts.length === 1 ? parts[0] : ['and', ...parts]
}

export function FilterPanel(props: { columns: FilterColumn[]; applied: string; onApply: (json: string) => void }) {
  const [values, setValues] = useState<Record<string, string>>({})
  const [json, setJson] = useState(props.applied)
  const [error, setError] = useState('')
  const apply = (text: string) => {
    if (text.trim())
      try {
        JSON.parse(text)
      } catch {
        return setError('The filter is not valid JSON.')
      }
    setError('')
    props.onApply(text.trim())
  }
  return (
    <details class="panel">
      <summary>Filter{props.applied ? ' (on)' : ''}</summary>
      <form
        class="filter"
        onSubmit={(e) => {
          e.preventDefault()
          const expr = expressionOf(props.columns, values)
          const text = expr ? JSON.stringify(expr) : ''
          setJson(text)
          apply(text)
        }}
      >
        <div class="grid">
          {props.columns.map((c) => {
            const id = `filter-${c.path.replace(/\W/g, '-')}`
            const set = (v: string) => setValues({ ...values, [c.path]: v })
            return (
              <div class="field" key={c.path}>
                <label for={id}>{c.path.includes('.') ? `${labelOf(c.path)} (${c.path})` : labelOf(c.path)}</label>
                {c.type === 'enum' || c.type === 'boolean' ? (
                  <select id={id} value={values[c.path] ?? ''} onChange={(e) => set(e.currentTarget.value)}>
                    <option value="">any</option>
                    {(c.options ?? ['true', 'false']).map((o) => (
                      <option key={o}>{o}</option>
                    ))}
                  </select>
                ) : (
                  <input
                    id={id}
                    type={c.type === 'number' ? 'number' : 'search'}
                    value={values[c.path] ?? ''}
                    onInput={(e) => set(e.currentTarget.value)}
                  />
                )}
              </div>
            )
          })}
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Apply
          </button>
          <button
            type="button"
            onClick={() => {
              setValues({})
              setJson('')
              apply('')
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <form
        class="filter-json"
        onSubmit={(e) => {
          e.preventDefault()
          apply(json)
        }}
      >
        <label for="filter-json">Filter as JSON (for experts)</label>
        <textarea
          id="filter-json"
          rows={2}
          value={json}
          spellcheck={false}
          onInput={(e) => setJson(e.currentTarget.value)}
          aria-describedby="filter-json-hint"
        />
        <small class="hint" id="filter-json-hint">
          {'{"login":"ann"} or ["ilike", ["property","name"], "%an%"]: see docs/api/errors-and-lists.md'}
        </small>
        <ErrorNote text={error} />
        <button type="submit">Apply JSON</button>
      </form>
    </details>
  )
}
