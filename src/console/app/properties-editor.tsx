/**
 * The editor of a model class's properties: a fieldset per property (name, caption, data type from
 * the API's enum, required, multi, default, and the items of an enum), add and remove.
 */
import type { JSX } from 'preact'
import { newRow, type PropRow } from './class-properties'
import type { Field } from './fields'

interface Props {
  f: Field
  rows: PropRow[]
  onChange: (rows: PropRow[]) => void
  /** The field an error names: `properties.<i>.<member>` marks that control. */
  invalid?: string
  prefix: string
}

const NO_DEFAULT_HINT: Record<string, string> = {
  boolean: 'true or false',
  any: 'JSON',
  attachment: 'JSON: {"name": …}',
  date: 'YYYY-MM-DD',
  time: 'HH:MM',
  datetime: 'ISO 8601',
}

function Row(props: Props & { i: number; row: PropRow }) {
  const { i, row, f } = props
  const id = (member: string) => `${props.prefix}-${f.path}-${i}-${member}`
  const invalid = (member: string) =>
    props.invalid === `${f.path}.${i}.${member}` || (member === 'name' && props.invalid === `${f.path}.${i}`)
      ? ('true' as const)
      : undefined
  const set = (patch: Partial<PropRow>) => props.onChange(props.rows.map((r, j) => (j === i ? { ...r, ...patch } : r)))
  const text =
    (member: keyof PropRow) => (e: JSX.TargetedEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>) =>
      set({ [member]: e.currentTarget.value })
  const items = row.items
    .split('\n')
    .map((x) => x.trim())
    .filter(Boolean)
  const hint = [NO_DEFAULT_HINT[row.data_type], row.multi ? 'a JSON array: ["a", "b"]' : ''].filter(Boolean).join('; ')
  return (
    <fieldset class="property">
      <legend>Property {i + 1}</legend>
      <div class="property-grid">
        <div class="field">
          <label for={id('name')}>Name</label>
          <input id={id('name')} required value={row.name} aria-invalid={invalid('name')} onInput={text('name')} />
        </div>
        <div class="field">
          <label for={id('type')}>Data type</label>
          <select id={id('type')} value={row.data_type} onChange={text('data_type')}>
            {f.options!.map((o) => (
              <option key={o} value={o} selected={row.data_type === o}>
                {o}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for={id('caption')}>Caption</label>
          <input id={id('caption')} value={row.caption} onInput={text('caption')} />
        </div>
        <div class="field">
          <label for={id('default')}>Default</label>
          {row.data_type === 'enum' && !row.multi ? (
            <select id={id('default')} value={row.default} aria-invalid={invalid('default')} onChange={text('default')}>
              <option value="">(none)</option>
              {items.map((o) => (
                <option key={o} value={o} selected={row.default === o}>
                  {o}
                </option>
              ))}
            </select>
          ) : (
            <input
              id={id('default')}
              value={row.default}
              placeholder={hint || undefined}
              aria-invalid={invalid('default')}
              onInput={text('default')}
            />
          )}
        </div>
        <label class="check">
          <input type="checkbox" checked={row.required} onChange={(e) => set({ required: e.currentTarget.checked })} />{' '}
          Required
        </label>
        <label class="check">
          <input type="checkbox" checked={row.multi} onChange={(e) => set({ multi: e.currentTarget.checked })} /> Multi
          (a list of values)
        </label>
        {row.data_type === 'enum' ? (
          <div class="field">
            <label for={id('items')}>Items</label>
            <textarea
              id={id('items')}
              rows={3}
              value={row.items}
              aria-invalid={invalid('items')}
              aria-describedby={`${id('items')}-hint`}
              onInput={text('items')}
            />
            <small class="hint" id={`${id('items')}-hint`}>
              One per line.
            </small>
          </div>
        ) : null}
      </div>
      <button
        type="button"
        class="link danger"
        onClick={() => props.onChange(props.rows.filter((_, j) => j !== i))}
        aria-label={`Remove property ${i + 1}${row.name ? ` (${row.name})` : ''}`}
      >
        Remove
      </button>
    </fieldset>
  )
}

export function PropertiesEditor(props: Props) {
  return (
    <fieldset class="field properties">
      <legend>{props.f.label}</legend>
      {props.rows.length === 0 ? <p class="hint">No properties yet.</p> : null}
      {props.rows.map((row, i) => (
        // by position: a row has no identity of its own while its name is being typed
        <Row key={i} {...props} i={i} row={row} />
      ))}
      <button type="button" onClick={() => props.onChange([...props.rows, newRow()])}>
        Add a property
      </button>
    </fieldset>
  )
}
