/** Password hashing: argon2id at the OWASP-recommended cost (19 MiB, 2 passes), about 50 ms here. */
import { createHash } from 'node:crypto'

const OPTIONS = { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 } as const

export function hashPassword(pwd: string): Promise<string> {
  return Bun.password.hash(pwd, OPTIONS)
}

/** A hash of nothing anyone knows, verified when the account does not exist so both paths cost the same. */
let decoy: Promise<string> | undefined

export async function verifyPassword(pwd: string, hash: string | null | undefined): Promise<boolean> {
  if (!hash) {
    decoy ??= hashPassword(crypto.randomUUID())
    await Bun.password.verify(pwd, await decoy)
    return false
  }
  return Bun.password.verify(pwd, hash)
}

/** A short digest of a password hash (none: no password), kept in sessions to tell that the password changed. */
export function credentialMark(hash: string | null | undefined): string {
  return createHash('sha256')
    .update(hash ?? '')
    .digest('base64url')
    .slice(0, 16)
}

/** A readable random password for generated accounts (the first administrator). */
export function generatePassword(length = 20): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789'
  const bytes = crypto.getRandomValues(new Uint8Array(length))
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('')
}
