/**
 * The operator's subcommands (`backup`, `restore`, `reset-password`): through the running
 * service's control socket when one answers, otherwise on the stopped service's own files. What
 * stops one names the setting to fix (DATA_DIR, LIBSQL_URL) and the value it had.
 */
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
} from 'node:fs'
import { dirname, resolve } from 'node:path'
import { PRIVATE_DIR, PRIVATE_FILE } from '~storage/private-files'
import type { Config } from '../config'
import type { Manifest } from '../app'
import { openDb, startService } from '../service'
import { resetPassword } from './admin-ops'
import { callControl, controlAnswers, controlSocketPath } from './control'
import { shownUrl } from '../net/shown-url'

type Operation = { run: 'backup' | 'restore'; file: string } | { run: 'reset-password'; login: string; domain?: string }

/** Runs one operation and answers the exit code (0 done, 1 failed). */
export async function runOperation(config: Config, manifest: Manifest, op: Operation): Promise<number> {
  const socket = controlSocketPath(config.dataDir)
  const running = existsSync(socket) && (await controlAnswers(socket))
  // a backup's path is the operator's, not the running service's working directory
  if (op.run === 'backup' || op.run === 'restore') op = { ...op, file: resolve(op.file) }
  try {
    if (op.run === 'reset-password') {
      const password = running
        ? String((await callControl(socket, 'reset-password', { login: op.login, domain: op.domain })).password)
        : await offlineReset(config, manifest, op.login, op.domain)
      console.log(`new password of ${op.login} (shown once): ${password}`)
    } else if (op.run === 'restore') {
      if (running)
        throw new Error(
          `the service is running on this data (${dataDirIs(config)}; its control socket ${socket} answers): ` +
            'stop it before restoring a backup (SIGTERM, or DELETE /rest/v1/master/nodes/<name>), ' +
            'or set DATA_DIR to another directory to restore into',
        )
      console.log(restore(config, op.file))
    } else {
      if (!existsSync(dirname(op.file)))
        throw new Error(`${dirname(op.file)} does not exist: make it first, or give the backup another path`)
      const done = running
        ? await callControl(socket, 'backup', { file: op.file })
        : await offlineBackup(config, op.file)
      console.log(`backup written to ${done.file} (${done.bytes} bytes)`)
    }
    return 0
  } catch (err) {
    console.error(`${op.run} failed: ${(err as Error).message}`)
    return 1
  }
}

/** The DATA_DIR in force, said as the operator set it (or did not). */
function dataDirIs(config: Config): string {
  const dir = resolve(config.dataDir)
  return process.env.DATA_DIR === undefined
    ? `DATA_DIR is not set, so the data directory is ${dir}, taken from where this command runs`
    : `DATA_DIR=${config.dataDir}${dir === config.dataDir ? '' : ` (${dir})`}`
}

/**
 * The embedded database's file, which must exist: a command run elsewhere than the service (another
 * DATA_DIR, another directory) would otherwise open or make an empty one. Null for a libSQL server.
 */
function existingDatabase(config: Config): string | null {
  if (!config.libsqlUrl.startsWith('file:')) return null
  const file = config.libsqlUrl.slice('file:'.length)
  if (existsSync(file)) return file
  if (process.env.LIBSQL_URL !== undefined)
    throw new Error(
      `there is no database at ${resolve(file)} (LIBSQL_URL=${shownUrl(config.libsqlUrl)}): set LIBSQL_URL as the service has it`,
    )
  throw new Error(
    `there is no database at ${resolve(file)} (${dataDirIs(config)}): set DATA_DIR to the directory the service ` +
      'keeps its data in, as it is set for the service, or run this where the service runs',
  )
}

async function offlineBackup(config: Config, file: string) {
  if (existsSync(file)) throw new Error(`${file} exists already: a backup never overwrites a file`)
  if (existingDatabase(config) === null)
    throw new Error('LIBSQL_URL names a libSQL server: back up the server itself (sqld or Turso snapshots)')
  const db = openDb(config)
  try {
    await db.backupTo(file)
  } finally {
    await db.close()
  }
  return { file, bytes: Bun.file(file).size }
}

/** The stopped service, started without listening or background work, to change one account. */
async function offlineReset(config: Config, manifest: Manifest, login: string, domain?: string) {
  // started elsewhere (another DATA_DIR, another directory) it would make a new installation
  existingDatabase(config)
  const service = await startService({ ...config, logLevel: 'error' }, manifest, { listen: false, schedule: false })
  try {
    return await resetPassword(service.deps, login, domain)
  } finally {
    await service.stop()
  }
}

const SQLITE_HEADER = 'SQLite format 3\u0000'

function restore(config: Config, file: string): string {
  if (!config.libsqlUrl.startsWith('file:'))
    throw new Error('LIBSQL_URL names a libSQL server: restore through the server')
  if (!existsSync(file)) throw new Error(`${file} does not exist`)
  const head = Buffer.alloc(16)
  const fd = openSync(file, 'r')
  readSync(fd, head, 0, 16, 0)
  closeSync(fd)
  if (head.toString('latin1') !== SQLITE_HEADER) throw new Error(`${file} is not a database backup`)
  const target = config.libsqlUrl.slice('file:'.length)
  let kept = ''
  if (existsSync(target)) {
    kept = `${target}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`
    renameSync(target, kept)
  }
  for (const suffix of ['-wal', '-shm']) rmSync(`${target}${suffix}`, { force: true })
  mkdirSync(dirname(target), { recursive: true, mode: PRIVATE_DIR })
  copyFileSync(file, target)
  chmodSync(target, PRIVATE_FILE) // a backup copied in keeps its mode: the database is the service's alone
  return `restored ${file} as ${target}${kept ? ` (the previous database is kept as ${kept})` : ''}`
}
