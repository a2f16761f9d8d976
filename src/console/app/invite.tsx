/**
 * Invitations: `POST /rest/v1/iam/invites {userid}` mails a user of the domain a link, valid three
 * days, to set its password (and login and name). The API keeps no list of the invitations sent, so
 * this page is the form alone: a user with an e-mail address, picked by login or name.
 */
import { useEffect, useState } from 'preact/hooks'
import { API, call, errorText, query } from './api'
import { get } from './schema'
import type { Collection } from './spec'
import { ErrorNote } from './error-note'

interface Person {
  id: string
  login: string
  name: string
  email: string
}

const USERS = `${API}/domain/users`

export function InvitePage(props: { collection: Collection }) {
  const c = props.collection
  const [find, setFind] = useState('')
  const [people, setPeople] = useState<Person[] | null>(null)
  const [userid, setUserid] = useState('')
  const [error, setError] = useState('')
  const [status, setStatus] = useState('')

  useEffect(() => {
    let live = true
    const like = `%${find.trim()}%`
    const filter = find.trim()
      ? JSON.stringify(['or', ['ilike', ['property', 'login'], like], ['ilike', ['property', 'name'], like]])
      : undefined
    const timer = setTimeout(() => {
      call<unknown[]>(
        'GET',
        USERS + query({ filter, limit: 100, order: '["login"]', mask: 'id,login,name,opts.email' }),
      )
        .then((a) => {
          if (!live) return
          const found = a.data
            .map((u) => ({
              id: String(get(u, 'id')),
              login: String(get(u, 'login') ?? ''),
              name: String(get(u, 'name') ?? ''),
              email: String(get(u, 'opts.email') ?? ''),
            }))
            .filter((u) => u.email)
          setPeople(found)
          setUserid((current) => (found.some((u) => u.id === current) ? current : (found[0]?.id ?? '')))
        })
        .catch((err) => live && setError(errorText(err)))
    }, 250)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [find])

  const send = async (e: Event) => {
    e.preventDefault()
    setError('')
    setStatus('')
    const who = people?.find((u) => u.id === userid)
    if (!who) return setError('Choose the user to invite.')
    try {
      await call('POST', c.path, { userid })
      setStatus(`An invitation was sent to ${who.login} at ${who.email}.`)
    } catch (err) {
      setError(errorText(err))
    }
  }
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{c.title}</h1>
      <p>
        An invitation mails a user of this domain a link, valid three days, to set a password (and its login and name).
        Sent invitations are not listed: the API keeps no list of them.
      </p>
      <form class="form" onSubmit={send} noValidate>
        <div class="field">
          <label for="invite-find">Find a user</label>
          <input id="invite-find" type="search" value={find} onInput={(e) => setFind(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="invite-user">User</label>
          <select
            id="invite-user"
            required
            value={userid}
            aria-describedby="invite-user-hint"
            onChange={(e) => setUserid(e.currentTarget.value)}
          >
            {(people ?? []).map((u) => (
              <option key={u.id} value={u.id}>
                {u.name && u.name !== u.login ? `${u.name} (${u.login})` : u.login} — {u.email}
              </option>
            ))}
          </select>
          <small class="hint" id="invite-user-hint">
            {people === null
              ? 'Loading the users…'
              : people.length
                ? 'Users with an e-mail address (the first 100 found).'
                : 'No user found has an e-mail address to send an invitation to.'}
          </small>
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={!people?.length}>
            Send the invitation
          </button>
        </div>
      </form>
      <ErrorNote text={error} />
      <p role="status">{status}</p>
    </section>
  )
}
