/**
 * The header: who is signed in and in which domain, the domain picker of a master administrator
 * (PATCH /rest/v1/iam/sessions/current {domain}), and sign-out.
 */
import { useEffect, useState } from 'preact/hooks'
import { API, call, errorText } from './api'
import { mayPickDomain, SESSION_URL, useSession } from './session'

const KNOWN = 'console.domains'

/** The domains to pick from: listed while in the master domain, remembered for the working ones. */
function useDomains(): string[] {
  const { session } = useSession()
  const [names, setNames] = useState<string[]>(() => JSON.parse(sessionStorage.getItem(KNOWN) ?? '[]'))
  useEffect(() => {
    if (!session.domain_is_master) return
    call<{ name: string }[]>('GET', `${API}/domain/domains?mask=name&limit=1000&order=%22name%22`).then(
      (a) => {
        const listed = a.data.map((d) => d.name)
        sessionStorage.setItem(KNOWN, JSON.stringify(listed))
        setNames(listed)
      },
      () => {},
    )
  }, [session.domain])
  const home = session.domains.filter((d) => d.is_master).map((d) => d.domain)
  return [...new Set([...home, ...names, session.domain])]
}

function DomainPicker(props: { onSwitch: (domain: string) => Promise<void> }) {
  const { session } = useSession()
  const domains = useDomains()
  const [picked, setPicked] = useState(session.domain)
  const [error, setError] = useState('')
  useEffect(() => setPicked(session.domain), [session.domain])
  return (
    <form
      class="picker"
      onSubmit={async (e) => {
        e.preventDefault()
        setError('')
        try {
          await props.onSwitch(picked)
        } catch (err) {
          setError(errorText(err))
        }
      }}
    >
      <label for="domain-picker">Domain</label>
      <select id="domain-picker" value={picked} onChange={(e) => setPicked(e.currentTarget.value)}>
        {domains.map((d) => (
          <option key={d} value={d}>
            {d}
            {session.domains.some((x) => x.domain === d && x.is_master) ? ' (master)' : ''}
          </option>
        ))}
      </select>
      <button type="submit" disabled={picked === session.domain}>
        Switch
      </button>
      {error ? (
        <span class="error" role="alert">
          {error}
        </span>
      ) : null}
    </form>
  )
}

export function Header(props: { menuOpen: boolean; onMenu: () => void; onSwitch: (domain: string) => Promise<void> }) {
  const { session, refresh } = useSession()
  return (
    <header class="top">
      <a class="brand" href="#/">
        Console
      </a>
      <button
        type="button"
        class="menu-toggle"
        aria-expanded={props.menuOpen}
        aria-controls="nav"
        onClick={props.onMenu}
      >
        Menu
      </button>
      <p class="who" id="who">
        <span>
          <span class="visually-hidden">Signed in as </span>
          <strong>{session.name_login}</strong>
        </span>{' '}
        <span>
          in <strong id="where">{session.domain}</strong>
          {session.domain_is_master ? ' (master)' : ''}
        </span>
      </p>
      {mayPickDomain(session) ? <DomainPicker onSwitch={props.onSwitch} /> : null}
      <button
        type="button"
        class="sign-out"
        onClick={async () => {
          await call('DELETE', SESSION_URL).catch(() => {})
          sessionStorage.removeItem(KNOWN)
          await refresh()
        }}
      >
        Sign out
      </button>
    </header>
  )
}
