/**
 * `npm run licence:issue -- --installation <uuid> [--domains 50 --svcscripts 30 ...] [--days 30 |
 * --expires 2027-01-01T00:00:00Z] [--key <private key PEM file>]`: prints a licence token for local
 * use, signed by default with the development key (keys/licence-dev.key.pem). The installation id is
 * the `installation` member of GET /rest/v1/master/license. Limits not given take the evaluation
 * licence's values.
 */
import { createPrivateKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { importPKCS8, SignJWT } from 'jose'
import { isUuid } from '~/ids'
import { algOf } from '~/master/licence-key'
import { EVALUATION, LICENCE_CLAIM, LICENCE_LIMITS, type Licence, type LicenceLimit } from '~/master/licence'

export const DEV_PRIVATE_KEY_FILE = join(import.meta.dir, '../keys/licence-dev.key.pem')

type Flag = keyof Licence['sqf']
const FLAGS: Flag[] = ['rec', 'cdr', 'sel']

export interface IssueOptions {
  /** The installation the licence is bound to (its `sub`). */
  installation: string
  dql?: Partial<Record<LicenceLimit, number>>
  sqf?: Partial<Record<Flag, boolean>>
  products?: string
  topleveldnpolicy?: number
  issuer?: string
  /** Issue time; default now. */
  issued?: Date
  /** No expiry when absent. */
  expires?: Date
  /** The signing key as PKCS#8 PEM (Ed25519 or P-256); default the development key. */
  privateKey?: string
}

/** A licence token (compact JWS) with the given limits; the rest from the evaluation licence. */
export async function issueLicence(o: IssueOptions): Promise<string> {
  const pem = o.privateKey ?? readFileSync(DEV_PRIVATE_KEY_FILE, 'utf8')
  const alg = algOf(createPrivateKey(pem))
  const licence: Licence = {
    products: o.products ?? EVALUATION.products,
    topleveldnpolicy: o.topleveldnpolicy ?? EVALUATION.topleveldnpolicy,
    dql: { ...EVALUATION.dql, ...o.dql },
    sqf: { ...EVALUATION.sqf, ...o.sqf },
  }
  const jwt = new SignJWT({ [LICENCE_CLAIM]: licence })
    .setProtectedHeader({ alg, typ: 'JWT' })
    .setSubject(o.installation)
    .setIssuer(o.issuer ?? 'licence-dev')
    .setIssuedAt(Math.floor((o.issued ?? new Date()).getTime() / 1000))
  if (o.expires) jwt.setExpirationTime(Math.floor(o.expires.getTime() / 1000))
  return jwt.sign(await importPKCS8(pem, alg))
}

const USAGE = `usage: npm run licence:issue -- --installation <uuid> [options]
  --<limit> N         ${LICENCE_LIMITS.join(', ')} (default: the evaluation licence's)
  --rec, --cdr, --sel true|false
  --products S, --topleveldnpolicy N, --issuer S
  --days N | --expires <RFC 3339 time>   (default: no expiry)
  --key FILE          PKCS#8 PEM private key (default: keys/licence-dev.key.pem, development only)`

function whole(name: string, raw: string): number {
  if (!/^\d+$/.test(raw)) throw new Error(`--${name} must be a whole number, got ${JSON.stringify(raw)}`)
  return Number(raw)
}

/** The command line as issue options; throws a sentence on a bad value. */
export function readArgs(args: string[], now = new Date()): IssueOptions {
  const names = [...LICENCE_LIMITS, ...FLAGS, 'installation', 'products', 'topleveldnpolicy', 'issuer']
  const options = Object.fromEntries([...names, 'days', 'expires', 'key'].map((n) => [n, { type: 'string' as const }]))
  const { values } = parseArgs({ args, options, strict: true, allowPositionals: false })
  const get = (n: string) => values[n] as string | undefined
  const installation = get('installation')
  if (!installation) throw new Error('--installation is required')
  if (!isUuid(installation))
    throw new Error('--installation must be a UUID (the installation member of GET /rest/v1/master/license)')
  const o: IssueOptions = { installation, dql: {}, sqf: {}, products: get('products'), issuer: get('issuer') }
  for (const limit of LICENCE_LIMITS) if (get(limit) !== undefined) o.dql![limit] = whole(limit, get(limit)!)
  for (const flag of FLAGS) {
    const raw = get(flag)
    if (raw === undefined) continue
    if (raw !== 'true' && raw !== 'false') throw new Error(`--${flag} must be true or false`)
    o.sqf![flag] = raw === 'true'
  }
  if (get('topleveldnpolicy') !== undefined) o.topleveldnpolicy = whole('topleveldnpolicy', get('topleveldnpolicy')!)
  if (get('days') !== undefined) o.expires = new Date(now.getTime() + whole('days', get('days')!) * 86_400_000)
  if (get('expires') !== undefined) {
    o.expires = new Date(get('expires')!)
    if (Number.isNaN(o.expires.getTime())) throw new Error('--expires must be an RFC 3339 time')
  }
  if (get('key') !== undefined) o.privateKey = readFileSync(get('key')!, 'utf8')
  return o
}

if (import.meta.main) {
  try {
    console.log(await issueLicence(readArgs(process.argv.slice(2))))
  } catch (err) {
    console.error(`licence:issue: ${(err as Error).message}\n${USAGE}`)
    process.exit(2)
  }
}
