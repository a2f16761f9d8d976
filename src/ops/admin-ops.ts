/**
 * Operations an operator runs from the command line, against the running service (through its
 * control socket) or a stopped one: a consistent backup of the database, and a new password for an
 * account whose password is lost (printed once; the account's sessions end).
 */
import { existsSync, rmSync } from 'node:fs'
import { clearAdminPending } from '~storage/installation'
import { systemCtx } from '../context'
import type { Deps } from '../deps'
import { findDomainByName, findMasterDomain } from '../directory/domains'
import { users } from '../directory/users'
import { commit } from '../entities/unit'
import { patchStep, preparePatch } from '../entities/writes'
import { badRequest, notFound } from '../errors'
import { generatePassword } from '../identity/passwords'
import { settingValue } from '../settings/settings'
import { initialPasswordFile } from '../startup'

export async function backupDatabase(deps: Deps, file: string): Promise<{ file: string; bytes: number }> {
  if (existsSync(file)) throw badRequest(`${file} exists already: a backup never overwrites a file`, 'file')
  await deps.db.backupTo(file)
  return { file, bytes: Bun.file(file).size }
}

/** Sets a generated password for `login` of `domain` (the master domain by default); answers it. */
export async function resetPassword(deps: Deps, login: string, domainName?: string): Promise<string> {
  // the master domain as stored: MASTER_DOMAIN may have changed since the first start
  const domain = domainName === undefined ? await findMasterDomain(deps) : await findDomainByName(deps, domainName)
  if (!domain) throw notFound(`there is no domain ${domainName ?? 'master'}`)
  const name = domain.name
  const [row] = await deps.repo(users.table).findBy(domain.id, 'login', login, 1)
  if (!row) throw notFound(`there is no user ${login} in ${name}`)
  const userId = row.doc.id
  // long enough for the domain's policy, whatever minimum it sets (the emergency path must not fail)
  const { min_length } = await settingValue<{ min_length: number }>(deps, domain.id, 'password_policy')
  const pwd = generatePassword(Math.max(20, min_length))
  const ctx = systemCtx(deps, domain.id, 'reset-password')
  const prepared = await preparePatch(ctx, users, userId, { pwd })
  const replaced = await commit(ctx, function* (u) {
    yield* patchStep(u, prepared, userId)
    // the first administrator's generated password, never announced, is replaced by this one
    return yield* clearAdminPending(userId)
  })
  if (replaced) rmSync(initialPasswordFile(deps.config.dataDir), { force: true })
  await deps.sessions.destroyUser(domain.id, userId)
  deps.log.warn('password reset by an operator', { domain: name, login })
  return pwd
}
