/**
 * Configuration from the environment, parsed by one schema at start. A bad value stops the start
 * with a message naming the variable. Empty variables count as unset.
 */
import * as v from 'valibot'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { login } from './directory/schemas'
import { parseAddress, parseCidr } from './net/cidr'
import { LOG_LEVELS, type LogLevel } from './log'
import { type LicenceKey, parseLicenceKey } from './master/licence-key'
import { parseSecretsKey } from './secret-box'

const integer = (min: number, max: number) =>
  v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(min), v.maxValue(max))
const onOff = v.picklist(['on', 'off'], 'must be on or off')
const cidrList = v.pipe(
  v.string(),
  v.transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  ),
  v.array(
    v.pipe(
      v.string(),
      v.check((c) => parseCidr(c) !== null, 'must be a comma list of addresses or CIDR blocks'),
    ),
  ),
)
/** A DNS name: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i
const url = v.pipe(v.string(), v.url('must be a URL'))
const webUrl = v.pipe(url, v.regex(/^https?:\/\//i, 'must be an http:// or https:// URL'))
const licenceKey = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    try {
      return parseLicenceKey(dataset.value)
    } catch (err) {
      addIssue({ message: (err as Error).message })
      return NEVER
    }
  }),
)

export const EnvSchema = v.object({
  PORT: v.optional(integer(0, 65535), '8080'),
  HOST: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (h) => parseAddress(h.replace(/^\[|\]$/g, '')) !== null || (!/^[\d.]+$/.test(h) && HOST_NAME.test(h)),
        'must be an IP address or a host name',
      ),
    ),
    '127.0.0.1',
  ),
  DATA_DIR: v.optional(v.string(), './data'),
  LIBSQL_URL: v.optional(
    v.pipe(v.string(), v.regex(/^(file:|libsql:|https?:|wss?:)/, 'must start with file:, libsql:, http(s): or ws(s):')),
  ),
  LIBSQL_AUTH_TOKEN: v.optional(v.string()),
  REDIS_URL: v.optional(v.pipe(v.string(), v.regex(/^rediss?:\/\//, 'must start with redis:// or rediss://'))),
  KV_PREFIX: v.optional(v.string(), ''),
  KV_TIMEOUT_MS: v.optional(integer(20, 30_000), '500'),
  MASTER_DOMAIN: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'must be a DNS-like name'),
    ),
    'master',
  ),
  ADMIN_LOGIN: v.optional(login, 'admin'),
  ADMIN_PASSWORD: v.optional(v.string()),
  PUBLIC_URL: v.optional(webUrl),
  RESEND_API_KEY: v.optional(v.string()),
  RESEND_BASE_URL: v.optional(url),
  MAIL_FROM: v.optional(v.string(), 'platform <noreply@localhost>'),
  SITE: v.optional(v.string(), 'site1'),
  NODE_NAME: v.optional(v.string()),
  TRUST_PROXY: v.optional(cidrList, ''),
  LOG_LEVEL: v.optional(v.picklist(LOG_LEVELS, `must be ${LOG_LEVELS.join(', ')}`), 'info'),
  WEBHOOK_ALLOW_PRIVATE: v.optional(cidrList, ''),
  GATEWAY: v.optional(onOff, 'on'),
  GATEWAY_INLINE: v.optional(onOff, 'on'),
  CHECK_ANSWERS: v.optional(onOff, 'off'),
  BACKGROUND: v.optional(onOff, 'on'),
  APP_PROCESSES: v.optional(integer(1, 64), '1'),
  APP_RESTART_MAX_MS: v.optional(integer(10, 3_600_000), '30000'),
  WEBAPPS_DIR: v.optional(v.string()),
  MAX_BODY_BYTES: v.optional(integer(1024, 1 << 30), String(16 * 1024 * 1024)),
  FILES_MAX_BYTES: v.optional(integer(1024, 2 ** 40), String(2 ** 30)),
  FILES_QUOTA_BYTES: v.optional(integer(0, 2 ** 50), String(10 * 2 ** 30)),
  FILES_QUOTA_FILES: v.optional(integer(0, 1_000_000_000), '100000'),
  SESSION_IDLE_TIMEOUT_SEC: v.optional(integer(60, 30 * 86400), '1800'),
  SESSION_MAX_PER_USER: v.optional(integer(1, 1000), '10'),
  SHUTDOWN_GRACE_SEC: v.optional(integer(0, 3600), '10'),
  JOURNAL_KEEP_DAYS: v.optional(integer(0, 100_000), '365'),
  JOURNAL_KEEP_PER_DOMAIN: v.optional(integer(0, 1_000_000_000), '0'),
  STARTUP_RETRIES: v.optional(integer(1, 100), '5'),
  LIST_SORT_MAX_RECORDS: v.optional(integer(0, 1_000_000_000), '50000'),
  LIST_SCAN_MAX_RECORDS: v.optional(integer(1, 1_000_000_000), '100000'),
  LIST_ASIDE_MIN_ROWS: v.optional(integer(0, 1_000_000_000), '10000'),
  GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: v.optional(integer(0, 1_000_000), '256'),
  LOG_REQUESTS: v.optional(
    v.pipe(v.string(), v.regex(/^(0|1|0?\.\d+)$/, 'must be a fraction from 0 to 1'), v.transform(Number)),
    '1',
  ),
  METRICS_TOKEN: v.optional(v.string()),
  CORS_ORIGINS: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) =>
        s
          .split(',')
          .map((o) => o.trim())
          .filter(Boolean),
      ),
      v.check(
        (list) => list.every((o) => /^https?:\/\/[^/\s]+$/.test(o)),
        'must be a comma list of origins such as https://app.example.com',
      ),
    ),
    '',
  ),
  COOKIE_SAMESITE: v.optional(v.picklist(['Strict', 'Lax', 'None'], 'must be Strict, Lax or None'), 'Strict'),
  COMPRESS_MIN_BYTES: v.optional(integer(0, 100_000_000), '1024'),
  WS_IDLE_TIMEOUT_SEC: v.optional(integer(10, 960), '120'),
  WS_MAX_FRAME_BYTES: v.optional(integer(1024, 64 * 1024 * 1024), String(1024 * 1024)),
  WS_BACKPRESSURE_BYTES: v.optional(integer(64 * 1024, 64 * 1024 * 1024), String(1024 * 1024)),
  WS_FRAMES_PER_SEC: v.optional(integer(1, 100_000), '100'),
  NODE_ROLES: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) =>
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      ),
      v.array(v.picklist(['svc', 'none'], 'must be a comma list of: svc, or none')),
      v.transform((roles) => roles.filter((r) => r !== 'none')),
    ),
    'svc',
  ),
  SCRIPT_MEMORY_MB: v.optional(integer(1, 4096), '64'),
  SCRIPT_STACK_KB: v.optional(integer(64, 65536), '1024'),
  SCRIPT_CPU_SEC: v.optional(integer(1, 86400), '10'),
  SCRIPT_DURATION_SEC: v.optional(integer(1, 7 * 86400), '3600'),
  SCRIPT_MAX_PER_DOMAIN: v.optional(integer(1, 100_000), '100'),
  SCRIPT_THREADS: v.optional(integer(1, 64), '2'),
  SCRIPT_TOKEN_LOGIN_SEC: v.optional(integer(1, 60), '5'),
  SCRIPT_HTTP_ALLOW: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) =>
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      ),
      v.array(
        v.pipe(
          v.string(),
          v.check(
            (a) => parseCidr(a) !== null || HOST_NAME.test(a.replace(/^\*\./, '')),
            'must be a comma list of host names, *.suffix or address blocks',
          ),
        ),
      ),
    ),
    '',
  ),
  SCRIPT_HTTP_TIMEOUT_SEC: v.optional(integer(1, 600), '10'),
  SCRIPT_HTTP_MAX_BYTES: v.optional(integer(1024, 1 << 30), String(1024 * 1024)),
  LICENSE_PUBLIC_KEY: v.optional(licenceKey),
  SECRETS_KEY: v.optional(
    v.pipe(
      v.string(),
      v.check((t) => parseSecretsKey(t) !== null, 'must be the base64 of 32 random bytes (openssl rand -base64 32)'),
    ),
  ),
  SECRETS_KEY_FILE: v.optional(v.string()),
})

/** Settings whose value is a secret: a message about one never shows it. */
const SECRET_SETTINGS = new Set([
  'ADMIN_PASSWORD',
  'LIBSQL_AUTH_TOKEN',
  'METRICS_TOKEN',
  'RESEND_API_KEY',
  'SECRETS_KEY',
])

export type Env = v.InferOutput<typeof EnvSchema>

export interface Config {
  port: number
  host: string
  dataDir: string
  libsqlUrl: string
  libsqlAuthToken?: string
  redisUrl?: string
  kvPrefix: string
  kvTimeoutMs: number
  masterDomain: string
  adminLogin: string
  adminPassword?: string
  publicUrl: string
  resendApiKey?: string
  resendBaseUrl?: string
  mailFrom: string
  site: string
  nodeName: string
  trustProxy: string[]
  logLevel: LogLevel
  webhookAllowPrivate: string[]
  gateway: boolean
  /** The gateway answers what it can take whole in-process; off relays every request to Bun.serve (to bisect a bug). */
  gatewayInline: boolean
  /** Every answer is checked against the schema its route declares for its status (tests). */
  checkAnswers: boolean
  /** Whether this process runs background work (off: it serves requests only, other processes do the work). */
  background: boolean
  /** APP_PROCESSES: app processes on the public port (this one and APP_PROCESSES - 1 it starts and watches). */
  appProcesses: number
  /** The longest pause before an app process that died is started again (it doubles from 1 s while it keeps dying). */
  appRestartMaxMs: number
  /** Settings given by an old name (RENAMED), as the start log tells them. */
  renamedSettings: string[]
  /** Metadata files of the web applications offered in the current session. */
  webappsDir: string
  maxBodyBytes: number
  /** Largest request body of an upload to channel files (they stream to disk, so it may exceed maxBodyBytes). */
  filesMaxBytes: number
  /** Each domain's channel files together: bytes and files at most (0: no bound). */
  filesQuota: { bytes: number; files: number }
  sessionIdleTimeoutSec: number
  sessionMaxPerUser: number
  shutdownGraceSec: number
  startupRetries: number
  listSortMaxRecords: number
  listScanMaxRecords: number
  listAsideMinRows: number
  gatewayMaxConnectionsPerAddress: number
  /** Share of requests logged (0 to 1). */
  logRequests: number
  metricsToken?: string
  corsOrigins: string[]
  cookieSameSite: 'Strict' | 'Lax' | 'None'
  compressMinBytes: number
  /** Journal retention: by age (days) and by count per domain; 0 turns either off. */
  journalKeepDays: number
  journalKeepPerDomain: number
  wsIdleTimeoutSec: number
  wsMaxFrameBytes: number
  /** What a websocket may hold unsent for a slow reader before it is closed (it resumes with `since`). */
  wsBackpressureBytes: number
  wsFramesPerSec: number
  nodeRoles: string[]
  script: {
    memoryBytes: number
    stackBytes: number
    cpuMs: number
    durationMs: number
    maxPerDomain: number
    threads: number
    tokenLoginMs: number
    httpAllow: string[]
    httpTimeoutMs: number
    httpMaxBytes: number
  }
  /** The key licences are verified with. */
  licenseKey: LicenceKey
  /** SECRETS_KEY: the key stored secrets are sealed with (base64), when given in the environment. */
  secretsKey?: string
  /** Where the key is kept otherwise (made at the first start): SECRETS_KEY_FILE, or DATA_DIR/secrets.key. */
  secretsKeyFile: string
}

/** The largest body any route accepts: what the listener (Bun.serve, the gateway) lets through; each route then applies its own limit. */
export const largestBody = (c: Pick<Config, 'maxBodyBytes' | 'filesMaxBytes'>) =>
  Math.max(c.maxBodyBytes, c.filesMaxBytes)

export class ConfigError extends Error {}

/**
 * Settings renamed since a release: the old name still works (when the new one is absent) and the
 * start log says to rename it. WORKERS counted app processes, which read as the background workers.
 */
const RENAMED: Record<string, string> = { WORKERS: 'APP_PROCESSES', WORKERS_RESTART_MAX_MS: 'APP_RESTART_MAX_MS' }

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''))
  const renamed: string[] = []
  for (const [old, now] of Object.entries(RENAMED)) {
    if (present[old] === undefined) continue
    if (present[now] === undefined) present[now] = present[old]
    delete present[old]
    renamed.push(`${old} is now ${now}: rename it (the old name will stop working)`)
  }
  const parsed = v.safeParse(EnvSchema, present)
  if (!parsed.success) {
    const issue = parsed.issues[0]
    const name = String(issue.path?.[0]?.key ?? 'environment')
    const got = SECRET_SETTINGS.has(name) ? 'the value is not shown' : `got ${JSON.stringify(issue.input)}`
    throw new ConfigError(`${name}: ${issue.message} (${got})`)
  }
  const e = parsed.output
  // one place for the key: two would leave the operator unsure which one sealed the secrets
  if (e.SECRETS_KEY !== undefined && e.SECRETS_KEY_FILE !== undefined)
    throw new ConfigError('SECRETS_KEY_FILE: SECRETS_KEY is set too: set one of them')
  // the processes share sessions, bans, limits, locks and cache invalidations through Redis, and one public port
  if (e.APP_PROCESSES > 1 && !e.REDIS_URL)
    throw new ConfigError(
      `APP_PROCESSES: ${e.APP_PROCESSES} app processes share their state through Redis: set REDIS_URL`,
    )
  if (e.APP_PROCESSES > 1 && e.GATEWAY !== 'on')
    throw new ConfigError(
      `APP_PROCESSES: ${e.APP_PROCESSES} app processes are reached through the gateway: set GATEWAY=on`,
    )
  const dataDir = e.DATA_DIR
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    libsqlUrl: e.LIBSQL_URL ?? `file:${join(dataDir, 'platform.db')}`,
    libsqlAuthToken: e.LIBSQL_AUTH_TOKEN,
    redisUrl: e.REDIS_URL,
    kvPrefix: e.KV_PREFIX,
    kvTimeoutMs: e.KV_TIMEOUT_MS,
    masterDomain: e.MASTER_DOMAIN,
    adminLogin: e.ADMIN_LOGIN,
    adminPassword: e.ADMIN_PASSWORD,
    publicUrl: (e.PUBLIC_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/$/, ''),
    resendApiKey: e.RESEND_API_KEY,
    resendBaseUrl: e.RESEND_BASE_URL,
    mailFrom: e.MAIL_FROM,
    site: e.SITE,
    nodeName: e.NODE_NAME ?? `${hostname().split('.')[0]}-${process.pid}`,
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
    gateway: e.GATEWAY === 'on',
    gatewayInline: e.GATEWAY_INLINE === 'on',
    checkAnswers: e.CHECK_ANSWERS === 'on',
    background: e.BACKGROUND === 'on',
    appProcesses: e.APP_PROCESSES,
    appRestartMaxMs: e.APP_RESTART_MAX_MS,
    renamedSettings: renamed,
    webappsDir: e.WEBAPPS_DIR ?? join(dataDir, 'webapps'),
    maxBodyBytes: e.MAX_BODY_BYTES,
    filesMaxBytes: e.FILES_MAX_BYTES,
    filesQuota: { bytes: e.FILES_QUOTA_BYTES, files: e.FILES_QUOTA_FILES },
    sessionIdleTimeoutSec: e.SESSION_IDLE_TIMEOUT_SEC,
    sessionMaxPerUser: e.SESSION_MAX_PER_USER,
    shutdownGraceSec: e.SHUTDOWN_GRACE_SEC,
    startupRetries: e.STARTUP_RETRIES,
    listSortMaxRecords: e.LIST_SORT_MAX_RECORDS,
    listScanMaxRecords: e.LIST_SCAN_MAX_RECORDS,
    listAsideMinRows: e.LIST_ASIDE_MIN_ROWS,
    gatewayMaxConnectionsPerAddress: e.GATEWAY_MAX_CONNECTIONS_PER_ADDRESS,
    logRequests: e.LOG_REQUESTS,
    metricsToken: e.METRICS_TOKEN,
    corsOrigins: e.CORS_ORIGINS,
    cookieSameSite: e.COOKIE_SAMESITE,
    compressMinBytes: e.COMPRESS_MIN_BYTES,
    journalKeepDays: e.JOURNAL_KEEP_DAYS,
    journalKeepPerDomain: e.JOURNAL_KEEP_PER_DOMAIN,
    wsIdleTimeoutSec: e.WS_IDLE_TIMEOUT_SEC,
    wsMaxFrameBytes: e.WS_MAX_FRAME_BYTES,
    wsBackpressureBytes: e.WS_BACKPRESSURE_BYTES,
    wsFramesPerSec: e.WS_FRAMES_PER_SEC,
    nodeRoles: e.NODE_ROLES,
    script: {
      memoryBytes: e.SCRIPT_MEMORY_MB * 1024 * 1024,
      stackBytes: e.SCRIPT_STACK_KB * 1024,
      cpuMs: e.SCRIPT_CPU_SEC * 1000,
      durationMs: e.SCRIPT_DURATION_SEC * 1000,
      maxPerDomain: e.SCRIPT_MAX_PER_DOMAIN,
      threads: e.SCRIPT_THREADS,
      tokenLoginMs: e.SCRIPT_TOKEN_LOGIN_SEC * 1000,
      httpAllow: e.SCRIPT_HTTP_ALLOW,
      httpTimeoutMs: e.SCRIPT_HTTP_TIMEOUT_SEC * 1000,
      httpMaxBytes: e.SCRIPT_HTTP_MAX_BYTES,
    },
    licenseKey: e.LICENSE_PUBLIC_KEY ?? parseLicenceKey(undefined),
    secretsKey: e.SECRETS_KEY,
    secretsKeyFile: e.SECRETS_KEY_FILE ?? join(dataDir, 'secrets.key'),
  }
}
