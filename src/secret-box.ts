/**
 * Secrets the service keeps and must read back in clear (the channels' webhook signing secrets),
 * sealed at rest with AES-256-GCM (WebCrypto) under a key kept apart from the database: SECRETS_KEY,
 * or the key file (src/ops/secrets-key.ts). A copy of the database, or a backup, alone reveals none
 * of them. The sealing key and the key's id are derived from the 32 bytes of the key by HKDF-SHA256,
 * each for its own purpose; the id (recorded in the database) says which key sealed what, and
 * reveals nothing of it. Each value is sealed bound to where it is kept (`where`: its table, domain
 * and id, as additional data), so one copied to another row does not open there.
 *
 *   stored = 'aesgcm1:' + base64(iv (12 random bytes) || ciphertext || tag (16 bytes))
 */
const PREFIX = 'aesgcm1:'
export const SECRETS_KEY_BYTES = 32
const IV_BYTES = 12
const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

/** A stored value that was sealed, as opposed to one kept in clear before secrets were sealed. */
export const isSealed = (stored: string) => stored.startsWith(PREFIX)

/** The bytes of a key as SECRETS_KEY and the key file hold them (base64 or base64url of 32 bytes), or null. */
export function parseSecretsKey(text: string): Uint8Array<ArrayBuffer> | null {
  const t = text.trim()
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) return null
  const bytes = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
  return bytes.byteLength === SECRETS_KEY_BYTES ? new Uint8Array(bytes) : null
}

/** A new key from the CSPRNG, as text (base64, what `openssl rand -base64 32` prints). */
export const newSecretsKey = (): string =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(SECRETS_KEY_BYTES))).toString('base64')

/** A sealed value that does not open with this key (another key sealed it, or it was changed or moved). */
export class SealedUnreadable extends Error {}

const hkdf = (info: string) => ({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: encoder.encode(info) })

export class SecretBox {
  private constructor(
    private readonly key: CryptoKey,
    /** 16 hex digits naming the key (recorded in the database); the key cannot be found from it. */
    readonly keyId: string,
  ) {}

  static async of(raw: Uint8Array<ArrayBuffer>): Promise<SecretBox> {
    if (raw.byteLength !== SECRETS_KEY_BYTES) throw new Error(`a secrets key is ${SECRETS_KEY_BYTES} bytes`)
    const base = await crypto.subtle.importKey('raw', raw, 'HKDF', false, ['deriveKey', 'deriveBits'])
    const key = await crypto.subtle.deriveKey(
      hkdf('platform: secrets at rest, AES-256-GCM, v1'),
      base,
      { name: 'AES-GCM', length: 256 },
      false,
      ['encrypt', 'decrypt'],
    )
    const id = await crypto.subtle.deriveBits(hkdf('platform: secrets key id, v1'), base, 64)
    return new SecretBox(key, Buffer.from(id).toString('hex'))
  }

  async seal(plain: string, where: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES))
    const sealed = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: encoder.encode(where) },
      this.key,
      encoder.encode(plain),
    )
    return PREFIX + Buffer.concat([iv, new Uint8Array(sealed)]).toString('base64')
  }

  /** The secret in clear; a value kept in clear (from before secrets were sealed) is answered as it is. */
  async open(stored: string, where: string): Promise<string> {
    if (!isSealed(stored)) return stored
    const bytes = Buffer.from(stored.slice(PREFIX.length), 'base64')
    try {
      const plain = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: bytes.subarray(0, IV_BYTES), additionalData: encoder.encode(where) },
        this.key,
        bytes.subarray(IV_BYTES),
      )
      return decoder.decode(plain)
    } catch {
      throw new SealedUnreadable(`the secret of ${where} does not open with the key ${this.keyId}`)
    }
  }
}
