/**
 * One item: its fields as a form from the change schema, saved with If-Match (the ETag of the read),
 * so a change made meanwhile by someone else is a clear conflict, not lost; delete after a
 * confirmation; a channel's secret rotated and shown once; a user's password replaced by a generated one.
 * Some collections add a part of their own (./item-parts.tsx): a channel's deliveries and
 * subscriptions, a script's start, a node's log level in place of its form.
 */
import { useEffect, useState } from 'preact/hooks'
import { deleteItem, itemUrl } from './actions'
import { ApiError, call, errorText } from './api'
import { confirm, showSecret } from './dialogs'
import { bodyOf, FieldError, fieldsOf, generatePassword, type Values, valuesOf } from './fields'
import { SchemaFields } from './form'
import { History } from './history'
import { ItemParts, ownForm } from './item-parts'
import { go, href } from './router'
import { cellText, columnsOf, get, labelOf, nameOf } from './schema'
import { useSession } from './session'
import type { Collection } from './spec'

export function ItemPage(props: { collection: Collection; id: string }) {
  const c = props.collection
  const url = itemUrl(c, props.id)
  const { session, refresh } = useSession()
  const [fields] = useState(() => fieldsOf(c.change, ['id', c.itemParam ?? 'id']))
  const [doc, setDoc] = useState<unknown>(null)
  const [etag, setEtag] = useState<string | undefined>()
  const [initial, setInitial] = useState<Values>({})
  const [values, setValues] = useState<Values>({})
  const [generated, setGenerated] = useState<Record<string, string>>({})
  const [error, setError] = useState<{ text: string; field?: string } | null>(null)
  const [conflict, setConflict] = useState(false)
  const [status, setStatus] = useState('')

  const load = async () => {
    try {
      const a = await call('GET', url)
      setDoc(a.data)
      setEtag(a.headers.get('etag') ?? undefined)
      const start = valuesOf(fields, a.data)
      setInitial(start)
      setValues(start)
      setConflict(false)
      setError(null)
    } catch (err) {
      setError({ text: errorText(err) })
    }
  }
  useEffect(() => {
    void load()
  }, [url])
  const name = doc ? nameOf(doc, c.itemParam) : props.id

  const save = async (e: Event) => {
    e.preventDefault()
    setStatus('')
    try {
      const body = bodyOf(fields, values, initial, 'change')
      if (!Object.keys(body).length) return setStatus('Nothing to save: no field changed.')
      await call(c.changeMethod!.toUpperCase(), url, body, etag ? { 'if-match': etag } : {})
      for (const [path, pwd] of Object.entries(generated))
        if (values[path] === pwd) await showSecret(`The new password of ${name}`, 'Password', pwd)
      setGenerated({})
      await load()
      setStatus('Saved.')
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) return setConflict(true)
      setError({ text: errorText(err), field: err instanceof FieldError ? err.path : (err as ApiError).field })
    }
  }
  const remove = async () => {
    try {
      const self = c.key === 'domain/users' && props.id === session.user_id
      if (!(await deleteItem(c, props.id, name, session, etag))) return
      if (self) return void (await refresh())
      go(href.list(c.key))
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) return setConflict(true)
      setError({ text: errorText(err) })
    }
  }
  const rotate = async () => {
    if (
      !(await confirm(
        'Rotate the signing secret?',
        `A new signing secret replaces the one of ${name}: receivers must be given the new one.`,
        'Rotate',
      ))
    )
      return
    try {
      const a = await call<{ secret: string }>('POST', `${url}/secret`)
      await showSecret(`The new signing secret of ${name}`, 'Signing secret', a.data.secret)
    } catch (err) {
      setError({ text: errorText(err) })
    }
  }
  const setPassword = async () => {
    const pwd = generatePassword()
    if (
      !(await confirm(
        'Set a new password?',
        `A generated password replaces the password of ${name}.`,
        'Set a new password',
      ))
    )
      return
    try {
      await call(c.changeMethod!.toUpperCase(), url, { pwd }, etag ? { 'if-match': etag } : {})
      await showSecret(`The new password of ${name}`, 'Password', pwd)
      await load()
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) return setConflict(true)
      setError({ text: errorText(err) })
    }
  }

  const readOnly = columnsOf(c.item).filter((col) => !fields.some((f) => f.path === col))
  return (
    <section aria-labelledby="page-title">
      <p class="crumbs">
        <a href={href.list(c.key)}>{c.title}</a>
      </p>
      <h1 id="page-title">
        {labelOf(c.noun)} {name}
      </h1>
      {conflict ? (
        <div class="conflict" role="alert">
          <p>
            <strong>Someone else changed this {c.noun} first.</strong> Your changes were not saved, so theirs are not
            lost. Reload to see the current version, then make your changes again.
          </p>
          <button
            type="button"
            class="primary"
            onClick={() => void load().then(() => setStatus('Reloaded the current version.'))}
          >
            Reload
          </button>
        </div>
      ) : null}
      {doc ? (
        <>
          <dl class="facts">
            {readOnly.map((col) => (
              <div key={col}>
                <dt>{col.includes('.') ? col : labelOf(col)}</dt>
                <dd>{cellText(get(doc, col)) || '—'}</dd>
              </div>
            ))}
          </dl>
          {ownForm(c) ? (
            ownForm(c)!({ collection: c, url, doc, reload: load })
          ) : c.changeMethod && fields.length ? (
            <form class="form" onSubmit={save} noValidate>
              <SchemaFields
                fields={fields}
                values={values}
                invalid={error?.field}
                prefix="edit"
                onChange={(path, raw) => setValues((v) => ({ ...v, [path]: raw }))}
                onGenerated={(path, pwd) => setGenerated((g) => ({ ...g, [path]: pwd }))}
              />
              <div class="actions">
                <button type="submit" class="primary">
                  Save
                </button>
              </div>
            </form>
          ) : null}
        </>
      ) : null}
      {error ? (
        <p class="error" role="alert">
          {error.text}
        </p>
      ) : null}
      <p role="status">{status}</p>
      {doc ? (
        <div class="actions">
          {c.key === 'service/integration_points' ? (
            <button type="button" onClick={rotate}>
              Rotate signing secret
            </button>
          ) : null}
          {c.key === 'domain/users' && fields.some((f) => f.path === 'pwd') ? (
            <button type="button" onClick={setPassword}>
              Set a generated password
            </button>
          ) : null}
          {c.canDelete ? (
            <button type="button" class="danger" onClick={remove}>
              Delete {c.noun}
            </button>
          ) : null}
        </div>
      ) : null}
      {c.key === 'design/classes' && typeof get(doc, 'classname') === 'string' ? (
        <p>
          <a href={href.list(`model/${get(doc, 'classname')}`)}>Records of {String(get(doc, 'classname'))}</a>
        </p>
      ) : null}
      {doc ? (
        <ItemParts
          collection={c}
          url={url}
          doc={doc}
          reload={load}
          unsaved={JSON.stringify(values) !== JSON.stringify(initial)}
        />
      ) : null}
      {doc && c.objtype && c.objtype !== 'setting' ? (
        <History objtype={c.objtype} objid={props.id} version={etag} />
      ) : null}
      {doc ? (
        <details class="panel">
          <summary>As JSON</summary>
          <pre>{JSON.stringify(doc, null, 2)}</pre>
        </details>
      ) : null}
    </section>
  )
}
