/**
 * The public key licences are verified with (LICENSE_PUBLIC_KEY: PEM text or the path of a PEM
 * file). Unset, it is the development key shipped in keys/, whose private half is public too:
 * production sets the licensor's key. Ed25519 keys verify EdDSA tokens, P-256 keys ES256 ones.
 */
import { createHash, createPublicKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { importSPKI } from 'jose'
import devPublicKey from '../../keys/licence-dev.pub.pem' with { type: 'text' }

export type LicenceAlg = 'EdDSA' | 'ES256'

export interface LicenceKey {
  /** The public key as SPKI PEM. */
  pem: string
  alg: LicenceAlg
  /** Fingerprint (SHA-256 of the SPKI): a stored licence counts only under the key that verified it. */
  id: string
  /** Whether this is the development key from keys/. */
  development: boolean
}

/** The algorithm a key signs or verifies with; anything but Ed25519 and P-256 is refused. */
export function algOf(key: { asymmetricKeyType?: string; asymmetricKeyDetails?: { namedCurve?: string } }): LicenceAlg {
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA'
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256'
  throw new Error('must be an Ed25519 or a P-256 (ES256) key')
}

/** The key of a LICENSE_PUBLIC_KEY value (PEM text or a file path); throws a sentence saying what is wrong. */
export function parseLicenceKey(value: string | undefined): LicenceKey {
  const development = value === undefined
  let text = value ?? devPublicKey
  if (!text.trimStart().startsWith('-----BEGIN')) {
    try {
      text = readFileSync(text, 'utf8')
    } catch (err) {
      throw new Error(`is neither PEM text nor a readable file (${(err as Error).message})`)
    }
  }
  if (text.includes('PRIVATE KEY')) throw new Error('must be the public key, not the private one')
  let key: ReturnType<typeof createPublicKey>
  try {
    key = createPublicKey(text)
  } catch (err) {
    throw new Error(`is not a PEM public key (${(err as Error).message})`)
  }
  const alg = algOf(key)
  const spki = key.export({ type: 'spki', format: 'der' })
  return {
    pem: key.export({ type: 'spki', format: 'pem' }).toString(),
    alg,
    id: createHash('sha256').update(spki).digest('base64url'),
    development,
  }
}

const imported = new Map<string, Promise<CryptoKey>>()

/** The key as jose verifies with it, imported once per key. */
export function verifyingKey(key: LicenceKey): Promise<CryptoKey> {
  let found = imported.get(key.pem)
  if (!found) {
    found = importSPKI(key.pem, key.alg)
    imported.set(key.pem, found)
  }
  return found
}
