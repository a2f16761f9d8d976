/** The current-session object of GET /rest/v1/iam/sessions/current. */
import { type Doc, optStr, stringsOf } from '~storage/doc'
import type { Deps } from '../deps'
import { isMasterDomain, listDomains } from '../directory/domains'
import { users } from '../directory/users'
import type { Session } from './sessions'
import { webappsFor } from './webapps'

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
  webapps: Doc[]
}

/** A master-domain account that holds `admin` there: it may switch into any domain. */
export async function isSuperuser(deps: Deps, s: Session): Promise<boolean> {
  return s.homeIsMaster && (await deps.access.rolesOf(s.homeDomainId, s.userId)).includes('admin')
}

/** Domains a session may switch into without signing in again: all of them for a superuser. */
export async function reachableDomains(
  deps: Deps,
  s: Session,
): Promise<{ domain: string; is_master: boolean; id: string }[]> {
  if (await isSuperuser(deps, s))
    return (await listDomains(deps)).map((d) => ({ domain: d.name, is_master: isMasterDomain(d), id: d.id }))
  const home = await deps.access.domainInfo(s.homeDomainId)
  return home ? [{ domain: home.name, is_master: home.isMaster, id: home.id }] : []
}

export async function currentSession(deps: Deps, s: Session): Promise<CurrentSession> {
  const domain = await deps.access.domainInfo(s.domainId)
  const roles = await deps.access.sessionRoles(s)
  // by id: a login may have been renamed, and given to another account, since the session began
  const account = await deps.repo(users.table).get(s.homeDomainId, s.userId)
  const login = optStr(account, 'login') ?? s.login
  const name = optStr(account, 'name') ?? s.name
  const tags = (account?.opts as Doc | undefined)?.tags
  return {
    domain: s.domainName,
    domain_is_master: s.isMaster,
    domains: (await reachableDomains(deps, s)).map(({ domain, is_master }) => ({ domain, is_master })),
    login,
    name,
    name_login: name ? `${name} (${login})` : login,
    roles,
    solution: domain?.solution ?? 'platform',
    tags: stringsOf(tags),
    user_id: s.userId,
    webapps: webappsFor(deps, roles),
  }
}
