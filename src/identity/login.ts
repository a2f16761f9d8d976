/** Checking credentials: domain name, login and password. Every failure looks the same to the caller. */
import type { Deps } from '../deps'
import { findDomainByName, isBlocked, isMasterDomain } from '../directory/domains'
import { findAccount } from '../directory/users'
import { forbidden } from '../errors'
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
  const user = account.doc
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
