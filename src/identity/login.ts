/**
 * Checking credentials: domain name, login and password, or an external token that the master
 * domain's `iam_token_svcscript_code` script turns into a domain and a login. Every failure looks
 * the same to the caller.
 */
import type { Deps } from '../deps'
import {
  domainCreated,
  findDomainByName,
  findMasterDomain,
  isBlocked,
  isMasterDomain,
  type StoredDomain,
} from '../directory/domains'
import { findAccount, type StoredAccount, users } from '../directory/users'
import { ApiError, forbidden } from '../errors'
import { settingValue } from '../settings/settings'
import { credentialMark, verifyPassword } from './passwords'
import type { NewSession, Session } from './sessions'
import { optStr, str } from '~storage/doc'
import { textOrNull } from '~storage/columns'

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
  return sessionOf(domain, account, kind)
}

/**
 * The session for an external token: the token script (started with the token as parameter 1)
 * answers `{domain, login}` of an existing user of an open domain; anything else (no script set, a
 * failure, an unknown domain or login, a blocked domain) is null, and says nothing more. A script
 * that did not answer within SCRIPT_TOKEN_LOGIN_SEC, or could not start for the domain's cap,
 * says nothing of the token: that is a 503 (or the 429), which the brute-force filter does not count.
 */
export async function checkToken(deps: Deps, token: string, kind: Session['kind']): Promise<NewSession | null> {
  const master = await findMasterDomain(deps)
  const code = master ? await settingValue<string>(deps, master.id, 'iam_token_svcscript_code') : ''
  if (!master || !code) return null
  try {
    const durationMs = deps.config.script.tokenLoginMs
    const outcome = await deps.scripts.runWithin({ domainId: master.id, code, params: [token], durationMs })
    if (!outcome) throw notChecked(durationMs)
    if (outcome.status !== 'done') return null
    const { domain: name, login } = (outcome.result ?? {}) as { domain?: unknown; login?: unknown }
    if (typeof name !== 'string' || typeof login !== 'string') return null
    const domain = await findDomainByName(deps, name.toLowerCase())
    const account = domain && !isBlocked(domain) ? await findAccount(deps, domain.id, login) : null
    return domain && account ? sessionOf(domain, account, kind) : null
  } catch (err) {
    if (err instanceof ApiError && (err.status === 503 || err.status === 429)) throw err
    deps.log.warn('token login script failed', { error: String(err) })
    return null
  }
}

const notChecked = (ms: number) =>
  new ApiError(
    503,
    `the token could not be checked within ${ms / 1000} s; try again shortly`,
    { retry_after: 1 },
    1503,
    {
      'retry-after': '1',
    },
  )

/**
 * Starts a session, or null when what it was granted on went while it was made. A password change
 * (or the account's deletion) ends the account's sessions after its commit, from their index: a
 * session indexed later would outlive it. So once this one is indexed, the account is read again,
 * and the session ends if the account is gone or its password is no longer the one checked (for a
 * session copied from another, the one checked for that).
 */
export function startSession(deps: Deps, data: NewSession): Promise<Session | null> {
  return deps.sessions.create(data, async () => {
    const hidden = await deps.repo(users.table).getHidden(data.homeDomainId, data.userId)
    if (!hidden) return false
    // copied from a session made before sessions held the mark: nothing to compare
    return data.cred === undefined || credentialMark(textOrNull(hidden.pwd_hash ?? null)) === data.cred
  })
}

function sessionOf(domain: StoredDomain, account: StoredAccount, kind: Session['kind']): NewSession {
  const user = account.doc as Record<string, unknown>
  return {
    kind,
    userId: str(user, 'id'),
    login: str(user, 'login'),
    name: optStr(user, 'name') ?? '',
    homeDomainId: domain.id,
    homeIsMaster: isMasterDomain(domain),
    domainId: domain.id,
    domainName: domain.name,
    isMaster: isMasterDomain(domain),
    domainCreated: domainCreated(domain),
    cred: credentialMark(account.pwdHash),
  }
}
