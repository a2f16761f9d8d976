/**
 * First start: create the master domain and its administrator, once. Later starts (and other
 * processes of a cluster starting at the same time) find them and change nothing.
 */
import { findMasterDomain } from '~storage/directory'
import { DuplicateError } from '~storage/repository'
import { isoTime } from '../clock'
import type { Deps } from '../deps'
import { rebuildCaches } from '../directory/maintain'
import { domainsTable, SYSTEM_ACTOR, usersTable } from './directory'
import { generatePassword, hashPassword } from './passwords'

export interface BootstrapResult {
  created: boolean
  login?: string
  /** Set only when generated here; shown once. */
  generatedPassword?: string
}

export async function bootstrap(deps: Deps): Promise<BootstrapResult> {
  if (await findMasterDomain(deps.db)) return { created: false }
  const { config } = deps
  const password = config.adminPassword ?? generatePassword()
  const hash = await hashPassword(password)
  const masterId = Bun.randomUUIDv7()
  const now = isoTime(deps.clock.now())
  const w = (domain: string) => ({ domain, now, actor: SYSTEM_ACTOR, requestId: 'bootstrap' })
  const domains = deps.repo(domainsTable)
  const users = deps.repo(usersTable)
  try {
    await deps.db.write(function* () {
      yield* domains.insert(w(''), {
        id: masterId,
        name: config.masterDomain,
        opts: { title: 'Master domain', isblocked: false },
      })
      yield* users.insert(
        w(masterId),
        { id: Bun.randomUUIDv7(), login: config.adminLogin, name: 'Administrator', roles: ['admin'], opts: {} },
        { pwd_hash: hash },
      )
      yield* rebuildCaches(masterId)
    })
  } catch (err) {
    if (err instanceof DuplicateError) return { created: false } // another process won the race
    throw err
  }
  return { created: true, login: config.adminLogin, generatedPassword: config.adminPassword ? undefined : password }
}
