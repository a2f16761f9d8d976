/** The current-session object of GET /rest/v1/iam/sessions/current. */
import { findDomainById, listDomains } from '~storage/directory'
import type { Deps } from '../deps'
import { isMasterDomain } from './directory'
import type { Session } from './sessions'

export interface CurrentSession {
  domain: string
  domain_is_master: boolean
  domains: { domain: string; is_master: boolean }[]
  login: string
  name: string
  name_login: string
  roles: string[]
  solution: string
  tags: string[]
  user_id: string
  webapps: Record<string, unknown>[]
}

/** Domains a session may switch into without signing in again: all of them for a master administrator. */
export async function reachableDomains(deps: Deps, s: Session): Promise<{ domain: string; is_master: boolean; id: string }[]> {
  if (s.superuser) return (await listDomains(deps.db)).map((d) => ({ domain: d.name, is_master: isMasterDomain(d), id: d.id }))
  const home = await findDomainById(deps.db, s.homeDomainId)
  return home ? [{ domain: home.name, is_master: isMasterDomain(home), id: home.id }] : []
}

export async function currentSession(deps: Deps, s: Session): Promise<CurrentSession> {
  const domain = await findDomainById(deps.db, s.domainId)
  const domains = (await reachableDomains(deps, s)).map(({ domain, is_master }) => ({ domain, is_master }))
  return {
    domain: s.domainName,
    domain_is_master: s.isMaster,
    domains,
    login: s.login,
    name: s.name,
    name_login: s.name ? `${s.name} (${s.login})` : s.login,
    roles: s.roles,
    solution: (domain?.doc.solution as string | undefined) ?? 'platform',
    tags: [],
    user_id: s.userId,
    webapps: [],
  }
}
