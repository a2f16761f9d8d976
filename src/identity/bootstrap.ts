/**
 * First start: create the master domain and its administrator, once. Later starts (and other
 * processes of a cluster starting at the same time) find them and change nothing.
 */
import { DuplicateError } from '~storage/repository'
import { systemCtx } from '../context'
import type { Deps } from '../deps'
import { findMasterDomain } from '../directory/domains'
import { domains } from '../entities/registry'
import { users } from '../directory/users'
import { commit } from '../entities/unit'
import { insertStep } from '../entities/writes'
import { newId } from '../ids'
import type { ApiError } from '../errors'
import { StartError } from '../startup'
import { checkPasswordPolicy } from './password-policy'
import { generatePassword, hashPassword } from './passwords'

export interface BootstrapResult {
  created: boolean
  login?: string
  /** Set only when generated here; shown once. */
  generatedPassword?: string
}

export async function bootstrap(deps: Deps): Promise<BootstrapResult> {
  const { config } = deps
  const found = await findMasterDomain(deps)
  if (found) {
    // the name is the installation's from its first start: said, not silently ignored
    if (found.name !== config.masterDomain)
      deps.log.warn(
        "MASTER_DOMAIN names another domain than this installation's master domain: it counts only at the first start",
        {
          MASTER_DOMAIN: config.masterDomain,
          master: found.name,
        },
      )
    return { created: false }
  }
  if (config.adminPassword !== undefined)
    // the first administrator's password meets the policy every later password must meet
    await checkPasswordPolicy(deps, '', config.adminPassword, 'ADMIN_PASSWORD').catch((err: ApiError) => {
      throw new StartError('ADMIN_PASSWORD', err.message)
    })
  const password = config.adminPassword ?? generatePassword()
  const hash = await hashPassword(password)
  const master = { id: newId(), name: config.masterDomain, opts: { title: 'Master domain', isblocked: false } }
  const admin = { id: newId(), login: config.adminLogin, name: 'Administrator', groups: [], roles: ['admin'], opts: {} }
  try {
    // the master domain's row has no parent: its `domain` column is ''
    await commit(systemCtx(deps, '', 'bootstrap'), function* (u) {
      yield* insertStep(u, { entity: domains, doc: master, input: master, hidden: {} })
      yield* insertStep(u.inDomain(master.id), { entity: users, doc: admin, input: admin, hidden: { pwd_hash: hash } })
    })
  } catch (err) {
    if (err instanceof DuplicateError) return { created: false } // another process won the race
    throw err
  }
  return { created: true, login: config.adminLogin, generatedPassword: config.adminPassword ? undefined : password }
}
