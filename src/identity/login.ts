/**
 * Checking credentials: domain name, login and password, or an external token that the master
 * domain's `iam_token_svcscript_code` script turns into a domain and a login. Every failure looks
 * the same to the caller.
 */
import type { Deps } from '../deps'
import { findDomainByName, findMasterDomain, isBlocked, isMasterDomain, type StoredDomain } from '../directory/domains'
import { findAccount } from '../directory/users'
import { forbidden } from '../errors'
import { settingValue } from '../settings/settings'
import { verifyPassword } from './passwords'
import type { NewSession, Session } from './sessions'

export interface Credentials {
  domain: string
  login: string
  pwd: string
}

/** The session to create for these credentials, or null when they are wrong. */
export async function checkCredentials(deps: Deps, c: Credentials, kind: Session['kind']): Promise<NewSession | null> {
  const domain = await findDomainByName(deps, c.domain.toLowerCase())
  const account = domain ? await findAccount(deps, domain.id, c.login) : null
  // verified even when the account is missing, so timing does not tell which part was wrong
  const valid = await verifyPassword(c.pwd, account?.pwdHash)
  if (!domain || !account || !valid) return null
  if (isBlocked(domain)) throw forbidden(`domain ${domain.name} is blocked`)
  return sessionOf(domain, account.doc, kind)
}

/**
 * The session for an external token: the token script (started with the token as parameter 1)
 * answers `{domain, login}` of an existing user of an open domain; anything else (no script set, a
 * failure, a slow script, an unknown domain or login, a blocked domain) is null, and says nothing more.
 */
export async function checkToken(deps: Deps, token: string, kind: Session['kind']): Promise<NewSession | null> {
  const master = await findMasterDomain(deps)
  const code = master ? await settingValue<string>(deps, master.id, 'iam_token_svcscript_code') : ''
  if (!master || !code) return null
  try {
    const durationMs = deps.config.script.tokenLoginMs
    const outcome = await deps.scripts.runWithin({ domainId: master.id, code, params: [token], durationMs })
    if (outcome?.status !== 'done') return null
    const { domain: name, login } = (outcome.result ?? {}) as { domain?: unknown; login?: unknown }
    if (typeof name !== 'string' || typeof login !== 'string') return null
    const domain = await findDomainByName(deps, name.toLowerCase())
    const account = domain && !isBlocked(domain) ? await findAccount(deps, domain.id, login) : null
    return domain && account ? sessionOf(domain, account.doc, kind) : null
  } catch (err) {
    deps.log.warn('token login script failed', { error: String(err) })
    return null
  }
}

function sessionOf(domain: StoredDomain, user: Record<string, unknown>, kind: Session['kind']): NewSession {
  return {
    kind,
    userId: user.id as string,
    login: user.login as string,
    name: (user.name as string | undefined) ?? '',
    homeDomainId: domain.id,
    homeIsMaster: isMasterDomain(domain),
    domainId: domain.id,
    domainName: domain.name,
    isMaster: isMasterDomain(domain),
  }
}
