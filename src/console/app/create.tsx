/**
 * A create form from the collection's create body schema. After the create a secret the answer
 * carries (a channel's signing secret) or a password the console generated is shown once.
 */
import { useState } from 'preact/hooks'
import { ApiError, call, errorText } from './api'
import { showSecret } from './dialogs'
import { bodyOf, defaultsOf, FieldError, fieldsOf, type Values, valuesOf } from './fields'
import { SchemaFields } from './form'
import { go, href } from './router'
import { get, nameOf } from './schema'
import type { Collection } from './spec'

export function CreatePage(props: { collection: Collection }) {
  const c = props.collection
  const [fields] = useState(() => fieldsOf(c.create))
  const [initial] = useState<Values>(() => valuesOf(fields, {}))
  // the form starts at the defaults; what differs from an empty form is sent
  const [values, setValues] = useState<Values>(() => defaultsOf(fields))
  const [generated, setGenerated] = useState<Record<string, string>>({})
  const [error, setError] = useState<{ text: string; field?: string } | null>(null)
  const [busy, setBusy] = useState(false)

  const submit = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    try {
      const made = (await call<Record<string, unknown>>('POST', c.path, bodyOf(fields, values, initial, 'create'))).data
      const name = nameOf(made, c.itemParam)
      if (typeof made?.secret === 'string')
        await showSecret(`The signing secret of ${name}`, 'Signing secret', made.secret)
      for (const [path, pwd] of Object.entries(generated))
        if (values[path] === pwd) await showSecret(`The password of ${name}`, 'Password', pwd)
      const id = get(made, c.itemParam ?? 'id')
      go(c.itemParam && id !== undefined ? href.item(c.key, String(id)) : href.list(c.key))
    } catch (err) {
      setError({
        text: errorText(err),
        field: err instanceof FieldError ? err.path : err instanceof ApiError ? err.field : undefined,
      })
    } finally {
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby="page-title">
      <p class="crumbs">
        <a href={href.list(c.key)}>{c.title}</a>
      </p>
      <h1 id="page-title">{c.createLabel ?? `New ${c.noun}`}</h1>
      <form class="form" onSubmit={submit} noValidate>
        <SchemaFields
          fields={fields}
          values={values}
          invalid={error?.field}
          onChange={(path, raw) => setValues((v) => ({ ...v, [path]: raw }))}
          onGenerated={(path, pwd) => setGenerated((g) => ({ ...g, [path]: pwd }))}
        />
        {error ? (
          <p class="error" role="alert">
            {error.text}
          </p>
        ) : null}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {c.createLabel ?? 'Create'}
          </button>
          <a class="button" href={href.list(c.key)}>
            Cancel
          </a>
        </div>
      </form>
    </section>
  )
}
