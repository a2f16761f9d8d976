/**
 * A form's controls from its fields (./fields.ts): each with its label, required mark and hint; a
 * nested object's fields in a fieldset; a password with a button that generates one.
 */
import type { JSX } from 'preact'
import type { PropRow } from './class-properties'
import { type Field, generatePassword, type Raw, type Values } from './fields'
import { PropertiesEditor } from './properties-editor'

const idOf = (prefix: string, path: string) => `${prefix}-${path.replace(/[^A-Za-z0-9_-]/g, '-')}`

interface Props {
  fields: Field[]
  values: Values
  onChange: (path: string, raw: Raw) => void
  /** A password the console generated, to be shown once after the save. */
  onGenerated?: (path: string, pwd: string) => void
  /** The field an error names. */
  invalid?: string
  prefix?: string
}

function Control(props: Props & { f: Field; id: string }) {
  const { f, id, values, onChange } = props
  const raw = values[f.path]
  const described = f.hint ? `${id}-hint` : undefined
  const common = {
    id,
    name: f.path,
    required: f.required,
    'aria-invalid': props.invalid === f.path ? ('true' as const) : undefined,
    'aria-describedby': described,
  }
  const text = (e: JSX.TargetedEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>) =>
    onChange(f.path, e.currentTarget.value)
  switch (f.kind) {
    case 'boolean':
      return (
        <input
          type="checkbox"
          {...common}
          checked={raw === true}
          onChange={(e) => onChange(f.path, e.currentTarget.checked)}
        />
      )
    case 'enum':
      return (
        <select {...common} value={String(raw ?? '')} onChange={text}>
          <option value="">{f.required ? 'Choose…' : '(not set)'}</option>
          {f.options!.map((o) => (
            <option key={o} value={o} selected={raw === o}>
              {o}
            </option>
          ))}
        </select>
      )
    case 'textarea':
    case 'code':
    case 'json':
    case 'list':
      return (
        <textarea
          {...common}
          rows={f.kind === 'code' ? 18 : f.kind === 'textarea' ? 8 : 3}
          class={f.kind === 'code' ? 'code' : undefined}
          value={String(raw ?? '')}
          onInput={text}
          spellcheck={false}
        />
      )
    case 'password':
      return (
        <span class="row">
          <input {...common} type="password" autoComplete="new-password" value={String(raw ?? '')} onInput={text} />
          <button
            type="button"
            onClick={() => {
              const pwd = generatePassword()
              onChange(f.path, pwd)
              props.onGenerated?.(f.path, pwd)
            }}
          >
            Generate
          </button>
        </span>
      )
    default:
      return (
        <input
          {...common}
          type={f.kind === 'number' ? 'number' : 'text'}
          step={f.kind === 'number' ? 'any' : undefined}
          value={String(raw ?? '')}
          onInput={text}
        />
      )
  }
}

function FieldView(props: Props & { f: Field }) {
  const { f } = props
  const id = idOf(props.prefix ?? 'f', f.path)
  const hint =
    f.kind === 'list'
      ? 'One per line.'
      : f.kind === 'json'
        ? 'JSON.'
        : f.kind === 'code'
          ? 'JavaScript: the body of an async function (startparam(n), log(level, …), data, emit, http, sleep).'
          : ''
  const fullHint = [f.required ? 'Required.' : '', f.hint, hint].filter(Boolean).join(' ')
  if (f.kind === 'properties')
    return (
      <PropertiesEditor
        f={f}
        rows={(props.values[f.path] as PropRow[] | undefined) ?? []}
        onChange={(rows) => props.onChange(f.path, rows)}
        invalid={props.invalid}
        prefix={props.prefix ?? 'f'}
      />
    )
  if (f.kind === 'multi') {
    const raw = (props.values[f.path] as string[] | undefined) ?? []
    return (
      <fieldset class="field multi">
        <legend>{f.label}</legend>
        {f.options!.map((o) => (
          <label key={o} class="check">
            <input
              type="checkbox"
              name={f.path}
              value={o}
              checked={raw.includes(o)}
              onChange={(e) =>
                props.onChange(f.path, e.currentTarget.checked ? [...raw, o] : raw.filter((x) => x !== o))
              }
            />{' '}
            {o}
          </label>
        ))}
      </fieldset>
    )
  }
  return (
    <div class={`field ${f.kind === 'boolean' ? 'check' : ''}`}>
      <label for={id}>{f.label}</label>
      <Control {...props} f={{ ...f, hint: fullHint || undefined }} id={id} />
      {fullHint ? (
        <small class="hint" id={`${id}-hint`}>
          {fullHint}
        </small>
      ) : null}
    </div>
  )
}

export function SchemaFields(props: Props) {
  const groups: { name?: string; fields: Field[] }[] = []
  for (const f of props.fields) {
    const last = groups.at(-1)
    if (last && last.name === f.group) last.fields.push(f)
    else groups.push({ name: f.group, fields: [f] })
  }
  return (
    <>
      {groups.map((g) =>
        g.name ? (
          <fieldset key={g.name} class="group">
            <legend>{g.name}</legend>
            {g.fields.map((f) => (
              <FieldView key={f.path} {...props} f={f} />
            ))}
          </fieldset>
        ) : (
          g.fields.map((f) => <FieldView key={f.path} {...props} f={f} />)
        ),
      )}
    </>
  )
}
