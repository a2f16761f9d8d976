/**
 * First start: create the master domain and its administrator, once. Later starts (and other
 * processes of a cluster starting at the same time) find them and change nothing.
 *
 * A password generated for the administrator (no ADMIN_PASSWORD) goes to the file
 * DATA_DIR/initial-admin-password (0600), never to the log; the start announces the file once it
 * listens (`announced`). Until then the installation marks the administrator as pending (in the
 * transaction that makes it), so a first start that fails before it listens (a port in use) has
 * used up nothing: the next start that will listen generates another password, writes it over the
 * file and announces that one, unless another start announced one meanwhile. Nodes starting at
 * once, each with a DATA_DIR of its own, may each generate one before any listens: a start announces
 * its file only if its password still signs in once the marker is cleared (after that no start
 * replaces it); one whose password another start replaced removes its file, which would not sign in.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { adminPending, clearAdminPending, markAdminPending, readAdminPending } from '~storage/installation'
import { PRIVATE_FILE } from '~storage/private-files'
import { DuplicateError } from '~storage/repository'
import { systemCtx } from '../context'
import type { Deps } from '../deps'
import { findMasterDomain } from '../directory/domains'
import { domains } from '../entities/registry'
import { users } from '../directory/users'
import { commit } from '../entities/unit'
import { insertStep, updateStep } from '../entities/writes'
import { newId } from '../ids'
import type { ApiError } from '../errors'
import { initialPasswordFile, StartError } from '../startup'
import { checkPasswordPolicy } from './password-policy'
import { generatePassword, hashPassword, verifyPassword } from './passwords'

export interface BootstrapResult {
  created: boolean
  login?: string
  /**
   * A password generated here for the first administrator, written to `file` and not announced yet:
   * at this start (`created`) or again because no earlier start got as far as listening.
   */
  generated?: { password: string; file: string; domain: string; userId: string }
}

/**
 * `retry`: this start will listen, so it is the one to generate a new password for an administrator
 * whose first one no start announced (the other app processes and the offline commands leave it).
 */
export async function bootstrap(deps: Deps, options: { retry?: boolean } = {}): Promise<BootstrapResult> {
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
    return options.retry ? renewPending(deps, found.id) : { created: false }
  }
  if (config.adminPassword !== undefined)
    // the first administrator's password meets the policy every later password must meet
    await checkPasswordPolicy(deps, '', config.adminPassword, 'ADMIN_PASSWORD').catch((err: ApiError) => {
      throw new StartError('ADMIN_PASSWORD', err.message)
    })
  const generated = config.adminPassword === undefined
  const password = config.adminPassword ?? generatePassword()
  const hash = await hashPassword(password)
  const master = { id: newId(), name: config.masterDomain, opts: { title: 'Master domain', isblocked: false } }
  const admin = { id: newId(), login: config.adminLogin, name: 'Administrator', groups: [], roles: ['admin'], opts: {} }
  try {
    // the master domain's row has no parent: its `domain` column is ''
    await commit(systemCtx(deps, '', 'bootstrap'), function* (u) {
      yield* insertStep(u, { entity: domains, doc: master, input: master, hidden: {} })
      yield* insertStep(u.inDomain(master.id), { entity: users, doc: admin, input: admin, hidden: { pwd_hash: hash } })
      if (generated) yield* markAdminPending(admin.id)
    })
  } catch (err) {
    if (err instanceof DuplicateError) return { created: false } // another process won the race
    throw err
  }
  if (!generated) return { created: true, login: config.adminLogin }
  return {
    created: true,
    login: config.adminLogin,
    generated: { password, file: writePassword(deps, password), domain: master.id, userId: admin.id },
  }
}

/** A new password for the administrator no start announced a password of; nothing when there is none. */
async function renewPending(deps: Deps, masterId: string): Promise<BootstrapResult> {
  const userId = await deps.db.read(readAdminPending)
  if (!userId) return { created: false }
  const admin = await deps.repo(users.table).get(masterId, userId)
  if (!admin) {
    await deps.db.write(() => clearAdminPending(userId)) // deleted meanwhile: nothing to announce
    return { created: false }
  }
  const password = generatePassword()
  const hash = await hashPassword(password)
  const renewed = await commit(systemCtx(deps, masterId, 'bootstrap'), function* (u) {
    // announced meanwhile by another start: its password stays
    if (!(yield* adminPending(userId))) return false
    yield* updateStep(u, users, userId, (doc) => doc, { hidden: { pwd_hash: hash } })
    return true
  })
  if (!renewed) return { created: false }
  const file = writePassword(deps, password)
  return { created: false, login: admin.login, generated: { password, file, domain: masterId, userId } }
}

/** The password as the file's whole content (0600, replaced whole: a reader never sees half of it). */
function writePassword(deps: Deps, password: string): string {
  const file = initialPasswordFile(deps.config.dataDir)
  const temp = `${file}.${crypto.randomUUID()}`
  try {
    writeFileSync(temp, `${password}\n`, { mode: PRIVATE_FILE, flag: 'wx' })
    renameSync(temp, file)
  } catch (err) {
    rmSync(temp, { force: true })
    throw new StartError('DATA_DIR', `cannot write ${file}: ${(err as Error).message}`)
  }
  return file
}

/**
 * The start that generated the password listens: announced from now on (the log names the file), so
 * no later start replaces it. False when its password no longer signs in: another start replaced it
 * before the marker was cleared here, or an operator reset it.
 */
export async function announced(deps: Deps, first: BootstrapResult): Promise<boolean> {
  if (!first.generated) return false
  const { domain, userId, password } = first.generated
  // cleared first: a renewal after this finds nothing pending, one before it changed the hash read below
  await deps.db.write(() => clearAdminPending(userId))
  const stored = await deps.repo(users.table).getHidden(domain, userId)
  return verifyPassword(password, typeof stored?.pwd_hash === 'string' ? stored.pwd_hash : undefined)
}

/**
 * Once listening: what the first start made, and where a generated password is (never the password:
 * the log goes where the operator's collector sends it). From then on the password counts as seen.
 * Answers what was announced: without `generated` when another start replaced the password.
 */
export async function announceFirstAdmin(deps: Deps, first: BootstrapResult): Promise<BootstrapResult> {
  const { log, config } = deps
  if (first.created)
    log.info('first start: created the master domain and its administrator', {
      domain: config.masterDomain,
      login: first.login,
    })
  if (!first.generated) return first
  const { file, password } = first.generated
  if (!(await announced(deps, first))) {
    // replaced by another start (or reset by an operator): this file's password no longer signs in
    if (holds(file, password)) rmSync(file, { force: true })
    log.warn("the first administrator's password generated at this start was replaced before it was announced", {
      login: first.login,
      file,
    })
    return { created: first.created, login: first.login }
  }
  // a warning: seen at LOG_LEVEL=warn too, and the operator has something to do (read it, change it)
  log.warn("the first administrator's password is in a file only the service's user may read", {
    login: first.login,
    file,
    // no earlier start got as far as listening: the password it generated was replaced
    renewed: !first.created,
  })
  return first
}

/** Whether the file holds this password (another process of the same DATA_DIR may have written its own). */
function holds(file: string, password: string): boolean {
  try {
    return readFileSync(file, 'utf8').trim() === password
  } catch {
    return false
  }
}
