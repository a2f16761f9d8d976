/** The signed-in session (GET /rest/v1/iam/sessions/current), shared by the console's components. */
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import { API, call } from './api'

export interface Session {
  domain: string
  domain_is_master: boolean
  domains: { domain: string; is_master: boolean }[]
  login: string
  name: string
  name_login: string
  roles: string[]
  user_id: string
}

export const SESSION_URL = `${API}/iam/sessions/current`

export async function readSession(): Promise<Session | null> {
  try {
    return (await call<Session>('GET', SESSION_URL)).data
  } catch {
    return null
  }
}

/** A master administrator may switch into any domain: signed in at home in the master domain as admin. */
export const mayPickDomain = (s: Session) => s.roles.includes('admin') && s.domains.some((d) => d.is_master)

export interface SessionState {
  session: Session
  /** Read the session again (after a domain switch). */
  refresh: () => Promise<void>
}

export const SessionContext = createContext<SessionState | null>(null)

export function useSession(): SessionState {
  const state = useContext(SessionContext)
  if (!state) throw new Error('useSession outside the signed-in console')
  return state
}
