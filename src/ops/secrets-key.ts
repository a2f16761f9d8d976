/**
 * The key the stored signing secrets are sealed with (src/secret-box.ts), found at start:
 * SECRETS_KEY when set, else the key file (SECRETS_KEY_FILE, by default DATA_DIR/secrets.key), made
 * (mode 0600) on the first start that finds none. The key is never in the database, nor in a
 * backup: the installation records only its id, so that a start with another key, or none, while
 * secrets sealed with the recorded one exist is a start error naming the setting rather than
 * deliveries signed with garbage. A key file other users may read is refused (not tightened): who
 * could read it may have copied it, and the operator must know.
 */
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Db } from '~storage/db'
import { readSecretsKeyId, recordSecretsKeyId } from '~storage/installation'
import { octal, openToOthers, PRIVATE_FILE } from '~storage/private-files'
import type { Config } from '../config'
import type { Logger } from '../log'
import { newSecretsKey, parseSecretsKey, SecretBox } from '../secret-box'
import { StartError } from '../startup'

const FILE_SETTING = 'SECRETS_KEY_FILE'
const ENV_SETTING = 'SECRETS_KEY'

/** The key file's text, or null when there is none; a file others may read, or that holds no key, is a StartError. */
function readKeyFile(file: string): string | null {
  let mode: number
  try {
    const s = statSync(file)
    if (!s.isFile()) throw new StartError(FILE_SETTING, `${file} is not a file`)
    mode = s.mode
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    if (err instanceof StartError) throw err
    throw new StartError(FILE_SETTING, `cannot read ${file}: ${(err as Error).message}`)
  }
  if (openToOthers(mode))
    throw new StartError(
      FILE_SETTING,
      `${file} is mode ${octal(mode)}: other users may read the secrets key; make it 0600 (chmod 600 ${file}), ` +
        'and if someone else may have read it, treat the signing secrets as known (rotate them)',
    )
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new StartError(FILE_SETTING, `cannot read ${file}: ${(err as Error).message}`)
  }
  if (!parseSecretsKey(text))
    throw new StartError(FILE_SETTING, `${file} holds no secrets key (the base64 of 32 random bytes)`)
  return text
}

/**
 * Writes a new key as `file` (0600), whole or not at all and never over another (a process starting
 * beside this one may have written one first: that one is answered).
 */
function writeKeyFile(file: string): string {
  const text = newSecretsKey()
  const temp = join(dirname(file), `.secrets-key-${crypto.randomUUID()}`)
  try {
    const fd = openSync(temp, 'wx', PRIVATE_FILE)
    try {
      writeSync(fd, `${text}\n`)
      fsyncSync(fd) // on disk before its name: a crash must not leave an empty key behind the name
    } finally {
      closeSync(fd)
    }
    linkSync(temp, file)
    syncDirectory(dirname(file)) // and the name on disk before a secret is sealed with it
    return text
  } catch (err) {
    // another process starting beside this one wrote its key first: that one serves both
    const theirs = (err as NodeJS.ErrnoException).code === 'EEXIST' ? readKeyFile(file) : null
    if (theirs) return theirs
    throw new StartError(FILE_SETTING, `cannot write ${file}: ${(err as Error).message}`)
  } finally {
    rmSync(temp, { force: true })
  }
}

/**
 * The box sealing this installation's secrets. `sealedCount` counts the stored secrets sealed with
 * the recorded key: with none, a missing or other key of an embedded database is taken instead
 * (with a warning); with some, or on a libSQL server whose other nodes hold the recorded key, it is
 * a StartError naming the setting.
 */
export async function openSecretBox(
  config: Config,
  db: Db,
  log: Logger,
  sealedCount: () => Promise<number>,
): Promise<SecretBox> {
  const file = config.secretsKeyFile
  const setting = config.secretsKey !== undefined ? ENV_SETTING : FILE_SETTING
  const recorded = await db.read(readSecretsKeyId)
  // a libSQL server is shared with other nodes, each with its own key: the one recorded stays
  const shared = !config.libsqlUrl.startsWith('file:')
  /** Why the recorded key must stay, or null when another may take its place (nothing sealed with it, one machine). */
  const mustKeep = async () => {
    const sealed = await sealedCount()
    if (sealed) return `${sealed} signing secret(s) of this installation are sealed with the key ${recorded}`
    return shared ? `the nodes of this installation seal its secrets with the key ${recorded}` : null
  }
  let text = config.secretsKey ?? readKeyFile(file)
  if (text === null) {
    const keep = recorded === null ? null : await mustKeep()
    if (keep)
      throw new StartError(
        FILE_SETTING,
        `${file} does not exist, and ${keep}: put its key file back there, or set ${ENV_SETTING} to it ` +
          '(a backup does not hold the key)',
      )
    text = writeKeyFile(file)
    log.info('a new secrets key was written: keep a copy apart from the backups', { file })
  }
  const box = await SecretBox.of(parseSecretsKey(text)!)
  if (recorded === box.keyId) return box
  if (recorded !== null) {
    const keep = await mustKeep()
    if (keep)
      throw new StartError(
        setting,
        `${setting === ENV_SETTING ? 'the key' : `${file} holds the key`} ${box.keyId}, but ${keep}: ` +
          'give the service that key',
      )
    log.warn(
      'the secrets key is not the one recorded; no stored secret was sealed with that one, so this one is taken',
      {
        setting,
        key: box.keyId,
        was: recorded,
      },
    )
  }
  if (!(await db.write(() => recordSecretsKeyId(box.keyId, recorded)))) {
    // another process starting at the same time recorded its key first
    const now = await db.read(readSecretsKeyId)
    if (now !== box.keyId)
      throw new StartError(
        setting,
        `another node recorded the secrets key ${now} while this one started with ${box.keyId}: ` +
          `give every node the same key (${ENV_SETTING}, or the same key file)`,
      )
  }
  return box
}

/** Makes a directory's entries (a new name) durable. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
