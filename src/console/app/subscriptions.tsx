/**
 * A `subscr` channel's webhook subscriptions (/rest/v1/service/webhooks): listed, made, renewed with
 * new terms and removed. That API takes the channel's own token (a session is refused), so the
 * console calls it with the channel's `token_local`, which its administrator may read anyway.
 */
import { useEffect, useState } from 'preact/hooks'
import { API, call, errorText } from './api'
import { confirm } from './dialogs'
import { when } from './history'
import { ErrorNote } from './error-note'

const BASE = `${API}/service/webhooks`
/** The longest lifetime the API takes (a day); a subscription lapses unless renewed. */
const MAX_EXPIRES = 86_400

interface Subscription {
  id: string
  events: string[]
  objects: unknown[]
  url: string
  until: string
}

interface Draft {
  events: string
  objects: string
  expires: string
  url: string
}

const EMPTY: Draft = { events: '', objects: '', expires: String(MAX_EXPIRES), url: '' }

/** The body of a POST or PUT from the form; throws a message naming the field. */
function bodyOf(d: Draft): Record<string, unknown> {
  const events = d.events.split(/\s*[\n,]\s*/).filter(Boolean)
  let objects: unknown = []
  if (d.objects.trim())
    try {
      objects = JSON.parse(d.objects)
    } catch {
      throw new Error('Objects is not valid JSON (objects)')
    }
  return { events, objects, expires: Number(d.expires), ...(d.url.trim() ? { url: d.url.trim() } : {}) }
}

export function Subscriptions(props: { token: string; channelUrl: string }) {
  const auth = { authorization: `Bearer ${props.token}` }
  const [subs, setSubs] = useState<Subscription[] | null>(null)
  const [draft, setDraft] = useState<Draft>(EMPTY)
  /** The subscription the form renews, or null for a new one. */
  const [editing, setEditing] = useState<string | null>(null)
  const [error, setError] = useState('')
  const [status, setStatus] = useState('')
  const [reads, setReads] = useState(0)

  useEffect(() => {
    call<Subscription[]>('GET', BASE, undefined, auth).then(
      (a) => setSubs(a.data),
      (err) => setError(errorText(err)),
    )
  }, [props.token, reads])

  const set = (k: keyof Draft) => (e: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [k]: e.currentTarget.value })
  const save = async (e: Event) => {
    e.preventDefault()
    setError('')
    setStatus('')
    try {
      const body = bodyOf(draft)
      if (editing) await call('PUT', `${BASE}/${encodeURIComponent(editing)}`, body, auth)
      else await call('POST', BASE, body, auth)
      setStatus(editing ? 'Subscription renewed.' : 'Subscribed.')
      setEditing(null)
      setDraft(EMPTY)
      setReads((n) => n + 1)
    } catch (err) {
      setError(errorText(err))
    }
  }
  const renew = (s: Subscription) => {
    setEditing(s.id)
    setStatus('')
    setDraft({
      events: s.events.join('\n'),
      objects: s.objects.length ? JSON.stringify(s.objects) : '',
      expires: String(MAX_EXPIRES),
      url: s.url === props.channelUrl ? '' : s.url,
    })
  }
  const remove = async (s: Subscription) => {
    const events = s.events.join(', ')
    if (!(await confirm('Remove this subscription?', `No more ${events} will be sent for it.`, 'Remove'))) return
    try {
      await call('DELETE', `${BASE}/${encodeURIComponent(s.id)}`, undefined, auth)
      setStatus('Subscription removed.')
      setReads((n) => n + 1)
    } catch (err) {
      setError(errorText(err))
    }
  }

  return (
    <section class="subscriptions" aria-labelledby="subscriptions-title">
      <h2 id="subscriptions-title">Webhook subscriptions</h2>
      <p class="hint">
        Events of this domain go to the channel while a subscription lives: at most a day unless renewed.
      </p>
      {subs?.length === 0 ? <p>No live subscriptions.</p> : null}
      {subs?.length ? (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Events</th>
                <th scope="col">Objects</th>
                <th scope="col">URL</th>
                <th scope="col">Lapses</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {subs.map((s) => (
                <tr key={s.id}>
                  <td>{s.events.join(', ')}</td>
                  <td>{s.objects.length ? JSON.stringify(s.objects) : 'any'}</td>
                  <td>{s.url}</td>
                  <td>
                    <time dateTime={s.until}>{when(s.until)}</time>
                  </td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="link"
                      onClick={() => renew(s)}
                      aria-label={`Renew ${s.events.join(', ')}`}
                    >
                      Renew
                    </button>
                    <button
                      type="button"
                      class="link danger"
                      onClick={() => remove(s)}
                      aria-label={`Remove ${s.events.join(', ')}`}
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <form class="form" onSubmit={save} noValidate aria-labelledby="subscribe-title">
        <h3 id="subscribe-title">{editing ? 'Renew the subscription' : 'Subscribe'}</h3>
        <div class="field">
          <label for="sub-events">Events</label>
          <textarea
            id="sub-events"
            rows={3}
            required
            value={draft.events}
            onInput={set('events')}
            aria-describedby="sub-events-hint"
          />
          <small class="hint" id="sub-events-hint">
            Required. One per line: CLASS.EVENT or CLASS.* (modelevents.data_changed for data changes).
          </small>
        </div>
        <div class="field">
          <label for="sub-objects">Objects</label>
          <textarea
            id="sub-objects"
            rows={2}
            value={draft.objects}
            onInput={set('objects')}
            aria-describedby="sub-objects-hint"
          />
          <small class="hint" id="sub-objects-hint">
            JSON array of what an event must be bound to, e.g. ["users"]; empty: any.
          </small>
        </div>
        <div class="field">
          <label for="sub-expires">Lifetime in seconds</label>
          <input
            id="sub-expires"
            type="number"
            min={1}
            max={MAX_EXPIRES}
            required
            value={draft.expires}
            onInput={set('expires')}
          />
        </div>
        <div class="field">
          <label for="sub-url">URL</label>
          <input
            id="sub-url"
            type="url"
            value={draft.url}
            onInput={set('url')}
            placeholder={props.channelUrl}
            aria-describedby="sub-url-hint"
          />
          <small class="hint" id="sub-url-hint">
            Where the events go; empty: the channel's URL.
          </small>
        </div>
        <ErrorNote text={error} />
        <p role="status" id="subscriptions-status">
          {status}
        </p>
        <div class="actions">
          <button type="submit" class="primary">
            {editing ? 'Renew' : 'Subscribe'}
          </button>
          {editing ? (
            <button
              type="button"
              onClick={() => {
                setEditing(null)
                setDraft(EMPTY)
              }}
            >
              Cancel
            </button>
          ) : null}
        </div>
      </form>
    </section>
  )
}
